package io.podsweeper.policy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * Reads a policy file, recognises its format by apiVersion and kind, and returns the validated internal model.
 * Anything wrong is a {@link PolicyException} naming the place; a policy is never half-loaded.
 */
public final class PolicyLoader {
  static final int MAX_POLICY_CODE_POINTS = 1 << 20;

  private PolicyLoader() {}

  public static Policy load(Path file) {
    String text;
    try {
      if (Files.size(file) > MAX_POLICY_CODE_POINTS * 4L) {
        throw new PolicyException(file.toString(), "file too large for a policy");
      }
      text = Files.readString(file);
    } catch (IOException e) {
      throw new PolicyException(file.toString(), "cannot read: " + e.getMessage());
    }
    return parse(text, file.getFileName().toString());
  }

  public static Policy parse(String text, String source) {
    try {
      return read(text, source);
    } catch (PolicyException e) {
      throw e;
    } catch (RuntimeException e) {
      // A mistake the validation did not foresee is still a refused policy with a message, never an error that ends
      // the caller: the reload timer, or a start that waits for a valid policy.
      throw new PolicyException(source, "cannot be read as a policy (" + e + "); a Podsweeper bug: please report it with the file");
    }
  }

  private static Policy read(String text, String source) {
    List<JsonNode> documents = YamlDocuments.read(text, source, MAX_POLICY_CODE_POINTS);
    if (documents.size() != 1) {
      throw new PolicyException(source, "a policy file holds exactly one document, found " + documents.size());
    }
    ConfigNode root = new ConfigNode(documents.get(0), "");
    if (!documents.get(0).isObject()) {
      throw new PolicyException(source, "a policy must be a YAML mapping with apiVersion and kind");
    }
    String apiVersion = root.has("apiVersion") ? root.child("apiVersion").string() : "";
    String kind = root.has("kind") ? root.child("kind").string() : "";
    if (NativePolicyFormat.API_VERSION.equals(apiVersion) && NativePolicyFormat.KIND.equals(kind)) {
      return NativePolicyFormat.read(root, source);
    }
    if (DeschedulerPolicyFormat.API_VERSION.equals(apiVersion) && DeschedulerPolicyFormat.KIND.equals(kind)) {
      return DeschedulerPolicyFormat.read(root, source);
    }
    if (DeschedulerV1alpha1Format.API_VERSION.equals(apiVersion) && DeschedulerV1alpha1Format.KIND.equals(kind)) {
      return DeschedulerV1alpha1Format.read(root, source);
    }
    if (KoordinatorFormat.API_VERSION.equals(apiVersion) && KoordinatorFormat.KIND.equals(kind)) {
      return KoordinatorFormat.read(root, source);
    }
    throw new PolicyException(
        source,
        "unsupported policy apiVersion \""
            + apiVersion
            + "\" kind \""
            + kind
            + "\" (supported: "
            + String.join(", ", supportedFormats())
            + ")");
  }

  static Set<String> supportedFormats() {
    return Set.of(NativePolicyFormat.API_VERSION + " " + NativePolicyFormat.KIND,
        DeschedulerPolicyFormat.API_VERSION + " " + DeschedulerPolicyFormat.KIND,
        DeschedulerV1alpha1Format.API_VERSION + " " + DeschedulerV1alpha1Format.KIND,
        KoordinatorFormat.API_VERSION + " " + KoordinatorFormat.KIND);
  }
}
