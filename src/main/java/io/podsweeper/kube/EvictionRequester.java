package io.podsweeper.kube;

import io.podsweeper.strategy.Decision;
import java.util.List;
import java.util.Optional;

/**
 * Podsweeper as an eviction requester of the EvictionRequest API (KEP-4563): it asks for a pod's eviction by an
 * EvictionRequest named after the pod's UID, with itself in {@code spec.requesters}, and cancels by taking itself out
 * again. {@link EvictionRequests} talks to the API server; tests stand in for it.
 */
public interface EvictionRequester {
  /** Podsweeper's name in {@code spec.requesters}: a fully qualified domain name, as the KEP requires. */
  String REQUESTER = "podsweeper.io";

  /**
   * Creates the pod's EvictionRequest, or joins the one that exists (server-side apply of this requester's part):
   * 2xx is {@link PodRemover.Outcome#REMOVED}, meaning requested; the pod then leaves in its own time.
   *
   * @param dryRun a server-side dry-run ({@code dryRun=All})
   */
  PodRemover.Result request(Decision decision, boolean dryRun);

  /** Takes this requester out of the pod's EvictionRequest; with no requester left it is canceled. */
  PodRemover.Result withdraw(Decision decision);

  /**
   * What an EvictionRequest says now, as far as its requester cares.
   *
   * @param uid its name: the pod's UID
   * @param requesters {@code spec.requesters[].name}
   * @param evicted the {@code Evicted} condition's message when it is True
   * @param canceled the {@code Canceled} condition's message when it is True
   * @param progress the active interceptor and what it reports ({@code status.activeInterceptors},
   *     {@code status.interceptors[].message}), empty while none reports
   */
  record Observed(String namespace, String uid, List<String> requesters, Optional<String> evicted, Optional<String> canceled,
      String progress) {}
}
