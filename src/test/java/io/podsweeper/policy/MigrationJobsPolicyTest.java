package io.podsweeper.policy;

import static io.podsweeper.policy.DeschedulerPolicyFormatTest.error;
import static io.podsweeper.policy.DeschedulerPolicyFormatTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import io.podsweeper.policy.MigrationJobs.EvictionPolicy;
import io.podsweeper.policy.MigrationJobs.Mode;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** When a policy asks for PodMigrationJobs: as koord-descheduler decides it, or the native migrationJobs setting. */
class MigrationJobsPolicyTest {
  private static String koordinator(String evict, String migrationArgs) {
    return """
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerConfiguration
        profiles:
          - name: k
            plugins:
              deschedule: {enabled: [{name: PodLifeTime}]}
              %s
            pluginConfig:
              - name: PodLifeTime
                args: {maxPodLifeTimeSeconds: 60}
              - name: MigrationController
                args: %s
        """.formatted(evict, migrationArgs);
  }

  @Test
  void koordinatorsDefaultEvictPluginMakesJobsWithItsDefaults() {
    assertThat(parse(koordinator("", "{}")).migrationJobs()).hasValue(MigrationJobs.KOORDINATOR_DEFAULTS);
    assertThat(MigrationJobs.KOORDINATOR_DEFAULTS)
        .isEqualTo(new MigrationJobs(Mode.RESERVATION_FIRST, Duration.ofMinutes(5), EvictionPolicy.EVICTION, Optional.empty()));
    assertThat(parse(koordinator("evict: {enabled: [{name: MigrationController}]}",
        "{defaultJobMode: EvictDirectly, defaultJobTTL: 2m, evictionPolicy: SoftEviction}")).migrationJobs())
        .hasValue(new MigrationJobs(Mode.EVICT_DIRECTLY, Duration.ofMinutes(2), EvictionPolicy.SOFT_EVICTION, Optional.empty()));
  }

  @Test
  void theDefaultEvictorInsteadEvictsDirectly() {
    assertThat(parse(koordinator("evict: {enabled: [{name: DefaultEvictor}], disabled: [{name: MigrationController}]}", "{}"))
        .migrationJobs()).isEmpty();
    assertThat(parse(koordinator("evict: {enabled: [{name: DefaultEvictor}], disabled: [{name: \"*\"}]}", "{}")).migrationJobs())
        .isEmpty();
  }

  @Test
  void wrongJobSettingsAreRejectedNamingThePlace() {
    assertThat(error(koordinator("", "{defaultJobMode: Reserve}")))
        .isEqualTo("profiles[0].pluginConfig[1].args.defaultJobMode: must be ReservationFirst, EvictDirectly, got \"Reserve\"");
    assertThat(error(koordinator("", "{evictionPolicy: Kill}")))
        .isEqualTo("profiles[0].pluginConfig[1].args.evictionPolicy: must be Eviction, Delete, SoftEviction, got \"Kill\"");
  }

  /** Koordinator's defaultDeleteOptions become the jobs' delete options; preconditions are accepted (Podsweeper's win). */
  @Test
  void defaultDeleteOptionsAreHonouredAndCheckedNamingThePlace() {
    assertThat(parse(koordinator("", "{defaultDeleteOptions: {gracePeriodSeconds: 7, propagationPolicy: Foreground,"
        + " preconditions: {uid: x}}}")).migrationJobs().orElseThrow().deleteOptions())
        .hasValue(new MigrationJobs.DeleteOptions(OptionalLong.of(7), Optional.of("Foreground")));
    assertThat(error(koordinator("", "{defaultDeleteOptions: {gracePeriodSeconds: -1}}")))
        .isEqualTo("profiles[0].pluginConfig[1].args.defaultDeleteOptions.gracePeriodSeconds: must be between 0 and "
            + Long.MAX_VALUE + ", got -1");
    assertThat(error(koordinator("", "{defaultDeleteOptions: {propagationPolicy: Later}}")))
        .isEqualTo("profiles[0].pluginConfig[1].args.defaultDeleteOptions.propagationPolicy: must be Orphan, Background or"
            + " Foreground, got \"Later\"");
    assertThat(error(koordinator("", "{defaultDeleteOptions: {dryRun: [All]}}"))).startsWith("profiles[0].pluginConfig[1].args.defaultDeleteOptions");
  }

  /** SetDefaults_MigrationControllerArgs: maxMigratingPerNode 2 when unset; Koordinator's filters skip a cap of 0 or less. */
  @Test
  void koordinatorsMigratingCapsDefaultAsKoordinatorDoes() {
    assertThat(parse(koordinator("", "{}")).limits().maxPerNode()).hasValue(2);
    assertThat(parse(koordinator("", "{maxMigratingPerNode: 5}")).limits().maxPerNode()).hasValue(5);
    Limits noCaps = parse(koordinator("", "{maxMigratingPerNode: 0, maxMigratingPerNamespace: 0, maxMigratingGlobally: -1}")).limits();
    assertThat(noCaps.maxPerNode()).isEmpty();
    assertThat(noCaps.maxPerNamespace()).isEmpty();
    assertThat(noCaps.maxTotal()).isEmpty();
  }

  /** Koordinator's evictBurst is 1 when unset, and its limiter raises 0 to 1; the native format keeps it as limits.burst. */
  @Test
  void evictBurstIsTheRatesBurst() {
    assertThat(parse(koordinator("", "{}")).limits().burst()).hasValue(1);
    assertThat(parse(koordinator("", "{evictBurst: 0}")).limits().burst()).hasValue(1);
    Policy five = parse(koordinator("", "{evictQPS: 2, evictBurst: 5}"));
    assertThat(five.limits().burst()).hasValue(5);
    assertThat(parse(NativePolicyWriter.write(five)).limits()).isEqualTo(five.limits());
  }

  /** Koordinator hands the MigrationController's nodeSelector to the DefaultEvictor: nodeFit considers only those nodes. */
  @Test
  void theMigrationControllersNodeSelectorLimitsNodeFit() {
    EvictorArgs evictor = parse(koordinator("", "{nodeFit: true, nodeSelector: 'pool=batch'}")).profiles().get(0).evictor();
    assertThat(evictor.nodeFit()).isTrue();
    assertThat(evictor.nodeSelector().matches(java.util.Map.of("pool", "batch"))).isTrue();
    assertThat(evictor.nodeSelector().matches(java.util.Map.of("pool", "general"))).isFalse();
  }

  /**
   * Koordinator's own filters hold whenever the MigrationController is the evict plugin, also beside a profile's
   * DefaultEvictor args (before, those args replaced them), and not when another plugin evicts.
   */
  @Test
  void koordinatorsFiltersHoldBesideADefaultEvictorsArgsWhileTheMigrationControllerEvicts() {
    String withDefaultEvictor = koordinator("", "{}").replace("- name: MigrationController\n",
        "- name: DefaultEvictor\n        args: {evictLocalStoragePods: true}\n      - name: MigrationController\n");
    EvictorArgs migrating = parse(withDefaultEvictor).profiles().get(0).evictor();
    assertThat(migrating.protections()).contains(Protection.PodsWithMaxEvictionCost, Protection.PodsOfSingleReplicaWorkloads)
        .doesNotContain(Protection.PodsWithLocalStorage);
    EvictorArgs direct = parse(withDefaultEvictor.replace("deschedule: {enabled: [{name: PodLifeTime}]}",
        "deschedule: {enabled: [{name: PodLifeTime}]}\n      evict: {enabled: [{name: DefaultEvictor}], disabled: [{name: MigrationController}]}"))
        .profiles().get(0).evictor();
    assertThat(direct.protections()).doesNotContain(Protection.PodsWithMaxEvictionCost, Protection.PodsOfSingleReplicaWorkloads);
  }

  /** The MigrationController's own filter protects pods of the maximum eviction cost; the upstream DefaultEvictor has none. */
  @Test
  void theMigrationControllerProtectsPodsOfTheMaximumEvictionCost() {
    assertThat(parse(koordinator("", "{evictAllBarePods: true}")).profiles().get(0).evictor().protections())
        .contains(Protection.PodsWithMaxEvictionCost);
    assertThat(error("""
        apiVersion: descheduler/v1alpha2
        kind: DeschedulerPolicy
        profiles:
          - name: p
            pluginConfig: [{name: DefaultEvictor, args: {podProtections: {extraEnabled: [PodsWithMaxEvictionCost]}}}]
        """)).contains("unknown protection \"PodsWithMaxEvictionCost\"");
  }

  /**
   * Unset per-workload caps are, in Koordinator, 1, 2 or 10% of the workload's expected replicas: Podsweeper, which does
   * not know them, takes 1, the smallest. Koordinator raises an explicit 0 to 1.
   */
  @Test
  void perWorkloadCapsNeverExceedKoordinatorsDefaults() {
    Limits unset = parse(koordinator("", "{}")).limits();
    assertThat(unset.maxInFlightPerOwner()).hasValue(1);
    assertThat(unset.maxUnavailablePerOwner()).hasValue(1);
    Limits set = parse(koordinator("", "{maxMigratingPerWorkload: 3, maxUnavailablePerWorkload: 0}")).limits();
    assertThat(set.maxInFlightPerOwner()).hasValue(3);
    assertThat(set.maxUnavailablePerOwner()).hasValue(1);
  }

  /**
   * Koordinator's expected-replicas check is on unless skipCheckExpectedReplicas is true (Podsweeper approximates it
   * from the owner's pods in the cache). podSelectors is no MigrationController argument.
   */
  @Test
  void theExpectedReplicasCheckIsOnUnlessSkipped() {
    assertThat(parse(koordinator("", "{}")).profiles().get(0).evictor().protections()).contains(Protection.PodsOfSingleReplicaWorkloads);
    assertThat(parse(koordinator("", "{skipCheckExpectedReplicas: false}")).profiles().get(0).evictor().protections())
        .contains(Protection.PodsOfSingleReplicaWorkloads);
    assertThat(parse(koordinator("", "{skipCheckExpectedReplicas: true}")).profiles().get(0).evictor().protections())
        .doesNotContain(Protection.PodsOfSingleReplicaWorkloads);
    assertThat(error(koordinator("", "{podSelectors: [{name: x, selector: {matchLabels: {app: web}}}]}"))).contains("podSelectors");
  }

  @Test
  void theNativeSettingIsReadAndWrittenBack() {
    Policy policy = parse("""
        apiVersion: podsweeper.io/v1alpha1
        kind: PodSweeperPolicy
        migrationJobs: {mode: EvictDirectly, evictionPolicy: Delete, deleteOptions: {gracePeriodSeconds: 3}}
        rules:
          - name: failed
            states: [Failed]
        """);
    assertThat(policy.migrationJobs()).hasValue(new MigrationJobs(Mode.EVICT_DIRECTLY, Duration.ofMinutes(5), EvictionPolicy.DELETE,
        Optional.of(new MigrationJobs.DeleteOptions(OptionalLong.of(3), Optional.empty()))));
    String written = NativePolicyWriter.write(policy);
    assertThat(written).contains("migrationJobs:", "mode: EvictDirectly", "evictionPolicy: Delete");
    assertThat(parse(written).migrationJobs()).isEqualTo(policy.migrationJobs());
  }
}
