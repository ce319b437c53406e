package io.podsweeper.removal;

/**
 * Whether the policy in force holds every change the teams made to their PodCleanupPolicies (and the admin to the
 * cluster-wide one) that could touch a pod: while it may not, that pod's removal waits. Asked per namespace, since a
 * team's policy acts in its own namespace only: a tenant whose many policies take a while to judge holds back its own
 * pods, never another namespace's.
 */
public interface PoliciesCurrent {
  /** Without namespaced policies: the file policy alone, always current. */
  PoliciesCurrent ALWAYS = new PoliciesCurrent() {
    @Override
    public boolean watched() {
      return true;
    }

    @Override
    public boolean in(String namespace) {
      return true;
    }
  };

  /** The policies are watched: no change can go unseen (the service's readiness). */
  boolean watched();

  /** Watched, and every change to {@code namespace}'s policies and to the cluster-wide one is in the policy in force. */
  boolean in(String namespace);
}
