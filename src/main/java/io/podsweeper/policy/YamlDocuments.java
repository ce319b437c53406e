package io.podsweeper.policy;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
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
    // One tree per document from our own parser: readValues(text) would split a root-level list into documents.
    try (JsonParser parser = new NoAliases((YAMLParser) factory.createParser(text))) {
      while (parser.nextToken() != null) {
        JsonNode doc = mapper.readTree(parser);
        // An empty document (a trailing or doubled ---) reads as "" with this factory: skip it too.
        if (doc != null && !doc.isNull() && !doc.isMissingNode() && !"".equals(doc.textValue())) {
          documents.add(doc);
        }
      }
    } catch (JsonProcessingException e) {
      throw new PolicyException(source, "not valid YAML or JSON: " + problem(e.getOriginalMessage()) + at(e.getLocation()));
    } catch (IOException | RuntimeException e) {
      throw new PolicyException(source, "not valid YAML or JSON: " + firstLine(e.getMessage()));
    }
    return documents;
  }

  /**
   * Jackson reads a YAML alias ({@code *name}) as a string holding the anchor's name, not as the anchored value:
   * {@code values: [*prod]} would silently become {@code ["prod"]}. Aliases are refused instead of misread.
   */
  private static final class NoAliases extends JsonParserDelegate {
    NoAliases(YAMLParser yaml) {
      super(yaml);
    }

    @Override
    public JsonToken nextToken() throws IOException {
      return checked(super.nextToken());
    }

    @Override
    public JsonToken nextValue() throws IOException {
      return checked(super.nextValue());
    }

    private JsonToken checked(JsonToken token) throws IOException {
      YAMLParser yaml = (YAMLParser) delegate();
      if (yaml.isCurrentAlias()) {
        throw new JsonParseException(this, "YAML aliases are not supported (*" + yaml.getText() + ")");
      }
      return token;
    }
  }

  /** SnakeYAML's message without its source excerpts: {@code while parsing X: expected Y, but got Z}. */
  private static String problem(String message) {
    if (message == null) {
      return "unreadable";
    }
    List<String> parts = message.lines().filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0))).toList();
    return parts.isEmpty() ? firstLine(message) : String.join(": ", parts);
  }

  private static String at(JsonLocation location) {
    return location == null || location.getLineNr() < 1
        ? ""
        : " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
