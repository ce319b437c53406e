package io.podsweeper.strategy;

/** Resource amounts as a person writes them: cpu in millicores, memory in binary units. */
final class Quantities {
  private Quantities() {}

  /** {@code 400m}, {@code 2000m} (cpu); {@code 512Mi}, {@code 1.5Gi} (memory and other byte amounts); else the number. */
  static String format(String resource, long amount) {
    if (resource.equals("cpu")) {
      return amount + "m";
    }
    if (resource.equals("memory") || resource.equals("ephemeral-storage")) {
      String[] units = {"Ki", "Mi", "Gi", "Ti"};
      double value = amount;
      String unit = "";
      for (int i = 0; i < units.length && Math.abs(value) >= 1024; i++) {
        value /= 1024;
        unit = units[i];
      }
      return (value == Math.rint(value) ? String.valueOf((long) value) : String.format(java.util.Locale.ROOT, "%.1f", value)) + unit;
    }
    return String.valueOf(amount);
  }
}
