package io.podsweeper.policy;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.LoaderOptions;

/**
 * Reads YAML or JSON (JSON is YAML), one or many {@code ---} separated documents, with limits that make hostile
 * input (alias bombs, deep nesting, huge files) a clear error instead of an exhausted heap.
 */
public final class YamlDocuments {
  static final int MAX_ALIASES = 50;
  static final int MAX_DEPTH = 100;

  private YamlDocuments() {}

  public static List<JsonNode> read(String text, String source, int maxCodePoints) {
    LoaderOptions options = new LoaderOptions();
    options.setMaxAliasesForCollections(MAX_ALIASES);
    options.setNestingDepthLimit(MAX_DEPTH);
    options.setCodePointLimit(maxCodePoints);
    options.setAllowDuplicateKeys(false);
    YAMLFactory factory = YAMLFactory.builder().loaderOptions(options).build();
    factory.setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build());
    ObjectMapper mapper = new ObjectMapper(factory).enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    List<JsonNode> documents = new ArrayList<>();
    // One tree per document; a reader's readValues would split a top-level list into documents instead.
    try (JsonParser parser = mapper.getFactory().createParser(text)) {
      while (parser.nextToken() != null) {
        JsonNode doc = mapper.readTree(parser);
        if (doc != null && !doc.isNull() && !doc.isMissingNode()) {
          documents.add(doc);
        }
      }
    } catch (IOException | RuntimeException e) {
      throw new PolicyException(source, "not valid YAML or JSON: " + firstLine(e.getMessage()));
    }
    return documents;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
