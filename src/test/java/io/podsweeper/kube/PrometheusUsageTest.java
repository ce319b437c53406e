package io.podsweeper.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Prometheus' instant-query answers, read as upstream reads them: a vector of node samples from 0 to 1. */
class PrometheusUsageTest {
  private static JsonObject answer(String resultType, String result) {
    return new JsonObject("{\"status\":\"success\",\"data\":{\"resultType\":\"" + resultType + "\",\"result\":[" + result + "]}}");
  }

  @Test
  void aVectorGivesEachNodeItsUsageInPercent() {
    assertThat(PrometheusUsage.vector(answer("vector", "{\"metric\":{\"instance\":\"a\"},\"value\":[1700000000.1,\"0.25\"]},"
        + "{\"metric\":{\"instance\":\"b\",\"job\":\"node\"},\"value\":[1700000000.1,\"1\"]}")))
        .isEqualTo(Map.of("a", 25.0, "b", 100.0));
  }

  @Test
  void anythingElseIsRefusedNotGuessed() {
    String[][] bad = {
      {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}", "bad_data: parse error"},
      {answer("matrix", "").encode(), "expected query results to be of type \"vector\", got \"matrix\" instead"},
      {answer("vector", "{\"metric\":{\"node\":\"a\"},\"value\":[1,\"0.5\"]}").encode(), "missing 'instance' key"},
      {answer("vector", "{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"1.5\"]}").encode(), "outside of <0; 1> interval"},
      {answer("vector", "{\"metric\":{\"instance\":\"a\"},\"value\":[1,\"NaN\"]}").encode(), "outside of <0; 1> interval"}};
    for (String[] b : bad) {
      assertThatThrownBy(() -> PrometheusUsage.vector(new JsonObject(b[0]))).as(b[0]).hasMessageContaining(b[1]);
    }
  }
}
