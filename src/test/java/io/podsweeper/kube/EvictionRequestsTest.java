package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.podsweeper.removal.EvictionRequester;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** An EvictionRequest read the KEP-4563 way (revision 2026-02-11): requesters, Evicted/Canceled, the active interceptor's progress. */
class EvictionRequestsTest {
  private static EvictionRequester.Observed read(String json) throws Exception {
    return EvictionRequests.observed(new ObjectMapper().readTree(json));
  }

  @Test
  void aNewRequestHasItsRequestersAndNoProgress() throws Exception {
    EvictionRequester.Observed o = read("""
        {"metadata": {"namespace": "vms", "name": "uid-1"},
         "spec": {"target": {"podRef": {"name": "virt-launcher-1", "uid": "uid-1"}},
                  "requesters": [{"name": "podsweeper.io"}, {"name": "drain.example.com"}]}}
        """);
    assertThat(o).isEqualTo(new EvictionRequester.Observed("vms", "uid-1", "virt-launcher-1", List.of("podsweeper.io", "drain.example.com"),
        Optional.empty(), Optional.empty(), "", EvictionRequester.Origin.UNKNOWN));
  }

  @Test
  void whatMadeARequestIsReadFromItsAnnotation() throws Exception {
    EvictionRequester.Observed o = read("""
        {"metadata": {"namespace": "vms", "name": "uid-1", "annotations": {"podsweeper.io/decision":
           "{\\"strategy\\":\\"LowNodeLoad\\",\\"profile\\":\\"koord\\",\\"rule\\":\\"koord\\",\\"balance\\":true}"}},
         "spec": {"target": {"podRef": {"name": "virt-launcher-1", "uid": "uid-1"}}, "requesters": [{"name": "podsweeper.io"}]}}
        """);
    assertThat(o.origin()).isEqualTo(new EvictionRequester.Origin("LowNodeLoad", "koord", "koord", true));
    assertThat(read("""
        {"metadata": {"namespace": "vms", "name": "uid-1", "annotations": {"podsweeper.io/decision": "{"}}}
        """).origin()).isEqualTo(EvictionRequester.Origin.UNKNOWN);
  }

  @Test
  void progressIsTheActiveInterceptorsMessage() throws Exception {
    EvictionRequester.Observed o = read("""
        {"metadata": {"namespace": "vms", "name": "uid-1"},
         "spec": {"requesters": [{"name": "podsweeper.io"}]},
         "status": {"targetInterceptors": [{"name": "kubevirt.io"}, {"name": "imperative-eviction.k8s.io"}],
                    "activeInterceptors": ["kubevirt.io"],
                    "interceptors": [{"name": "kubevirt.io", "message": "migrating, 40%"},
                                     {"name": "imperative-eviction.k8s.io", "message": ""}]}}
        """);
    assertThat(o.progress()).isEqualTo("kubevirt.io: migrating, 40%");
  }

  @Test
  void onlyATrueConditionEndsIt() throws Exception {
    EvictionRequester.Observed evicted = read("""
        {"metadata": {"namespace": "vms", "name": "uid-1"}, "spec": {"requesters": null},
         "status": {"conditions": [{"type": "Canceled", "status": "False", "reason": "NotCanceled"},
                                   {"type": "Evicted", "status": "True", "reason": "PodDeleted", "message": ""}]}}
        """);
    assertThat(evicted.evicted()).contains("PodDeleted");
    assertThat(evicted.canceled()).isEmpty();
    assertThat(evicted.requesters()).isEmpty();
    EvictionRequester.Observed canceled = read("""
        {"metadata": {"namespace": "vms", "name": "uid-1"},
         "status": {"conditions": [{"type": "Canceled", "status": "True", "reason": "ValidationFailed",
                                    "message": "Target Pod virt-launcher-1 was not found."}]}}
        """);
    assertThat(canceled.canceled()).contains("Target Pod virt-launcher-1 was not found.");
  }
}
