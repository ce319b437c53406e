package io.podsweeper.removal;

import io.podsweeper.strategy.Decision;
import java.util.List;
import java.util.Optional;

/**
 * Podsweeper as an eviction requester of the EvictionRequest API (KEP-4563): it asks for a pod's eviction by an
 * EvictionRequest named after the pod's UID, with itself in {@code spec.requesters}, and cancels by taking itself out
 * again. {@code kube/EvictionRequests} talks to the API server; tests stand in for it.
 */
public interface EvictionRequester {
  /** Podsweeper's name in {@code spec.requesters}: a fully qualified domain name, as the KEP requires. */
  String REQUESTER = "podsweeper.io";

  /**
   * Creates the pod's EvictionRequest, or joins the one that exists (server-side apply of this requester's part):
   * 2xx is {@link RequestResult.Outcome#REMOVED}, meaning requested; the pod then leaves in its own time.
   *
   * @param balance made by a node-aware strategy: written on the request with the decision's profile and rule
   *     ({@link Origin}), so that whoever takes it over judges it by the same rules
   * @param dryRun a server-side dry-run ({@code dryRun=All})
   */
  RequestResult request(Decision decision, boolean balance, boolean dryRun);

  /** Takes this requester out of the pod's EvictionRequest; with no requester left it is canceled. */
  RequestResult withdraw(Decision decision);

  /**
   * Every EvictionRequest the cluster has now, as far as this service has listed them (none before the first list):
   * a new leader, or a restarted process, takes over those that list this requester.
   */
  List<Observed> listed();

  /**
   * What made a request, as written on it ({@code metadata.annotations["podsweeper.io/decision"]}): the decision's
   * strategy, profile and rule, and whether a node-aware strategy made it (judged again by its profile's protections,
   * not by a deadline).
   */
  record Origin(String strategy, String profile, String rule, boolean balance) {
    /** A request made before requests said what made them: judged as a deadline of no rule in particular. */
    public static final Origin UNKNOWN = new Origin("", "", "", false);
  }

  /**
   * What an EvictionRequest says now, as far as its requester cares.
   *
   * @param uid its name: the pod's UID
   * @param pod the pod's name ({@code spec.target.podRef.name})
   * @param requesters {@code spec.requesters[].name}
   * @param evicted the {@code Evicted} condition's message when it is True
   * @param canceled the {@code Canceled} condition's message when it is True
   * @param progress the active interceptor and what it reports ({@code status.activeInterceptors},
   *     {@code status.interceptors[].message}), empty while none reports
   * @param origin what made it, when this service did
   */
  record Observed(String namespace, String uid, String pod, List<String> requesters, Optional<String> evicted,
      Optional<String> canceled, String progress, Origin origin) {}
}
