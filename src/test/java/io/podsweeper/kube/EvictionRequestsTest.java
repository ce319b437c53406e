package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.podsweeper.removal.EvictionRequester;
import io.podsweeper.removal.RequestResult;
import io.podsweeper.removal.RequestResult.Outcome;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * An EvictionRequest read the KEP-4563 way (revision 2026-02-11): requesters, Evicted/Canceled, the active interceptor's
 * progress; and this requester's withdrawal, the JSON patch and its retries.
 */
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

  private static final ObjectMapper JSON = new ObjectMapper();

  /** A list of one EvictionRequest at {@code resourceVersion} with these requesters and, optionally, the origin annotation. */
  private static PodRemover.Reply listed(String resourceVersion, boolean origin, String... requesters) {
    StringBuilder entries = new StringBuilder();
    for (String r : requesters) {
      entries.append(entries.isEmpty() ? "" : ",").append("{\"name\":\"").append(r).append("\"}");
    }
    String annotations = origin ? ",\"annotations\":{\"podsweeper.io/decision\":\"{}\",\"team\":\"a\"}" : "";
    return new PodRemover.Reply(new RequestResult(Outcome.REMOVED, 200, ""), """
        {"kind": "EvictionRequestList", "items": [{"metadata": {"namespace": "vms", "name": "uid-1", "resourceVersion": "%s"%s},
          "spec": {"target": {"podRef": {"name": "virt-launcher-1", "uid": "uid-1"}}, "requesters": [%s]}}]}
        """.formatted(resourceVersion, annotations, entries));
  }

  @Test
  void theWithdrawalTestsTheVersionAndTheEntryThenRemovesOnlyThisRequestersPart() throws Exception {
    ArrayNode patch = EvictionRequests.withdrawal(JSON.readTree(listed("41", true, "drain.example.com", "podsweeper.io", "x.example.com")
        .body()).path("items").get(0)).orElseThrow();
    assertThat(patch).isEqualTo(JSON.readTree("""
        [{"op": "test", "path": "/metadata/resourceVersion", "value": "41"},
         {"op": "test", "path": "/spec/requesters/1/name", "value": "podsweeper.io"},
         {"op": "remove", "path": "/spec/requesters/1"},
         {"op": "remove", "path": "/metadata/annotations/podsweeper.io~1decision"}]
        """));
    // Without the origin annotation (another writer made the entry), there is no annotation to remove.
    assertThat(EvictionRequests.withdrawal(JSON.readTree(listed("7", false, "podsweeper.io").body()).path("items").get(0)).orElseThrow())
        .hasSize(3).last().isEqualTo(JSON.readTree("{\"op\": \"remove\", \"path\": \"/spec/requesters/0\"}"));
    assertThat(EvictionRequests.withdrawal(JSON.readTree(listed("7", true, "drain.example.com").body()).path("items").get(0))).isEmpty();
  }

  @Test
  void aWithdrawalRefusedBecauseTheRequestChangedReadsItAgainAndPatchesTheNewOne() {
    // Between the first read and its patch another requester joined at the front: the patch's tests fail (422).
    Deque<PodRemover.Reply> reads = new ArrayDeque<>(List.of(listed("41", true, "podsweeper.io"),
        listed("42", true, "drain.example.com", "podsweeper.io")));
    Deque<RequestResult> answers = new ArrayDeque<>(List.of(new RequestResult(Outcome.ERROR, 422, "testing value /metadata/resourceVersion failed"),
        new RequestResult(Outcome.REMOVED, 200, "")));
    List<ArrayNode> sent = new ArrayList<>();
    RequestResult result = EvictionRequests.withdraw("uid-1", reads::pop, p -> {
      sent.add(p);
      return answers.pop();
    });
    assertThat(result.outcome()).isEqualTo(Outcome.REMOVED);
    assertThat(sent).extracting(p -> p.get(0).path("value").asText() + " " + p.get(2).path("path").asText())
        .containsExactly("41 /spec/requesters/0", "42 /spec/requesters/1");
  }

  @Test
  void aWithdrawalEndsWithoutAWriteWhenTheRequestIsGoneOrThisServiceIsNoLongerARequester() {
    List<ArrayNode> sent = new ArrayList<>();
    PodRemover.Reply none = new PodRemover.Reply(new RequestResult(Outcome.REMOVED, 200, ""), "{\"kind\": \"EvictionRequestList\", \"items\": []}");
    assertThat(EvictionRequests.withdraw("uid-1", () -> none, p -> {
      sent.add(p);
      return new RequestResult(Outcome.REMOVED, 200, "");
    }).outcome()).isEqualTo(Outcome.GONE);
    assertThat(EvictionRequests.withdraw("uid-1", () -> listed("9", false, "drain.example.com"), p -> {
      sent.add(p);
      return new RequestResult(Outcome.REMOVED, 200, "");
    })).isEqualTo(new RequestResult(Outcome.REMOVED, 200, "not among its requesters (any more)"));
    RequestResult forbidden = new RequestResult(Outcome.ERROR, 403, "forbidden");
    assertThat(EvictionRequests.withdraw("uid-1", () -> new PodRemover.Reply(forbidden, ""), p -> {
      sent.add(p);
      return new RequestResult(Outcome.REMOVED, 200, "");
    })).isEqualTo(forbidden);
    assertThat(sent).isEmpty();
  }

  @Test
  void aRequestThatKeepsChangingIsGivenUpAfterFiveAttemptsWithTheLastAnswer() {
    List<ArrayNode> sent = new ArrayList<>();
    RequestResult conflict = new RequestResult(Outcome.CONFLICT, 409, "the object has been modified");
    assertThat(EvictionRequests.withdraw("uid-1", () -> listed("1", false, "podsweeper.io"), p -> {
      sent.add(p);
      return conflict;
    })).isEqualTo(conflict);
    assertThat(sent).hasSize(EvictionRequests.WITHDRAW_ATTEMPTS);
  }
}
