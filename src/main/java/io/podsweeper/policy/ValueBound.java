package io.podsweeper.policy;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How large a CEL value can be (before evaluation: an upper bound from {@link PodView.Max}) or is (during it: a value
 * measured): a string's characters, a list's or map's entries and how large those are, a view record's fields. The
 * one measure {@link CelCost} charges by, before and during evaluation alike.
 */
record ValueBound(Kind kind, long size, ValueBound element, ValueBound value, Class<?> record) {
  enum Kind { SCALAR, STRING, LIST, MAP, RECORD }

  /** Where sums and products stop: far past any limit, and far from overflowing as they add up. */
  static final long CAP = 1L << 40;
  /** Characters a unit of cost compares, copies or hashes: about the time of one evaluated node (docs/benchmarks.md). */
  static final int CHARACTERS_PER_UNIT = 100;

  static final ValueBound SCALAR = new ValueBound(Kind.SCALAR, 0, null, null, null);
  /** A string of a size nothing bounds but the request the pod came in. */
  static final ValueBound ANY_STRING = string(PodView.REQUEST);
  /** What nothing bounds: a value typed {@code dyn} that may be a list or a string. */
  static final ValueBound UNBOUNDED = new ValueBound(Kind.LIST, CAP, ANY_STRING, null, null);

  static ValueBound string(long characters) {
    return new ValueBound(Kind.STRING, Math.min(characters, CAP), null, null, null);
  }

  static ValueBound list(long items, ValueBound element) {
    return new ValueBound(Kind.LIST, Math.min(items, CAP), element, null, null);
  }

  static ValueBound map(long items, ValueBound key, ValueBound value) {
    return new ValueBound(Kind.MAP, Math.min(items, CAP), key, value, null);
  }

  static ValueBound record(Class<?> type) {
    return new ValueBound(Kind.RECORD, 0, null, null, type);
  }

  /** {@code amount} in units of {@code per}, rounded up. */
  static long units(long amount, long per) {
    return (amount + per - 1) / per;
  }

  static long add(long a, long b) {
    return Math.min(CAP, a + b);
  }

  static long times(long a, long b) {
    return a == 0 || b == 0 ? 0 : a > CAP / b ? CAP : Math.min(CAP, a * b);
  }

  /**
   * The entries CEL for Java goes through each time it reads the value (it adapts every list and map it reads, entry by
   * entry, nested ones too): a view field read inside a loop is read whole at each turn.
   */
  long walk() {
    return switch (kind) {
      case LIST -> times(size, 1 + element.walk());
      case MAP -> times(size, 1 + value.walk());
      default -> 0;
    };
  }

  /** Units to go through the value once, as comparing or copying it does: a string's characters by a hundred, every entry, a record's fields. */
  long weight() {
    return switch (kind) {
      case SCALAR -> 0;
      case STRING -> units(size, CHARACTERS_PER_UNIT);
      case LIST -> times(size, 1 + element.weight());
      case MAP -> times(size, add(1 + element.weight(), value.weight()));
      case RECORD -> fields(record).values().stream().mapToLong(f -> 1 + f.weight()).reduce(0, ValueBound::add);
    };
  }

  /** A bound of both: of either branch of a conditional, of a list's elements. */
  ValueBound join(ValueBound other) {
    if (other.kind != kind) {
      return kind == Kind.SCALAR ? other : other.kind == Kind.SCALAR ? this : UNBOUNDED;
    }
    return switch (kind) {
      case SCALAR -> this;
      case STRING -> string(Math.max(size, other.size));
      case LIST -> list(Math.max(size, other.size), element.join(other.element));
      case MAP -> map(Math.max(size, other.size), element.join(other.element), value.join(other.value));
      case RECORD -> record == other.record ? this : UNBOUNDED;
    };
  }

  /** A list's element, a map's key (what a comprehension goes through); a scalar for anything else. */
  ValueBound iterated() {
    return kind == Kind.LIST || kind == Kind.MAP ? element : SCALAR;
  }

  /** A list's element or a map's value: what an index yields. */
  ValueBound indexed() {
    return switch (kind) {
      case LIST -> element;
      case MAP -> value;
      default -> SCALAR;
    };
  }

  /** A record's field, as {@link PodView.Max} bounds it; a map's value, for a map read with a field's syntax. */
  ValueBound field(String name) {
    return switch (kind) {
      case RECORD -> fields(record).getOrDefault(name, SCALAR);
      case MAP -> value;
      default -> SCALAR;
    };
  }

  /** The value's own size, a string's length or a list's or map's entries, with this bound for what it holds. */
  ValueBound measured(Object actual) {
    if (actual instanceof String s) {
      return string(s.length());
    }
    if (actual instanceof Collection<?> c) {
      return list(c.size(), kind == Kind.LIST ? element : ANY_STRING);
    }
    if (actual instanceof Map<?, ?> m) {
      return kind == Kind.MAP ? map(m.size(), element, value) : map(m.size(), ANY_STRING, ANY_STRING);
    }
    return this;
  }

  /** The entries CEL for Java goes through reading the value ({@link #walk()}), counted on the value itself. */
  static long walk(Object actual) {
    if (actual instanceof Collection<?> c) {
      long entries = c.size();
      if (!c.isEmpty() && containsContainers(c.iterator().next())) {
        for (Object e : c) {
          entries = add(entries, walk(e));
        }
      }
      return entries;
    }
    if (actual instanceof Map<?, ?> m) {
      long entries = m.size();
      if (!m.isEmpty() && containsContainers(m.values().iterator().next())) {
        for (Object v : m.values()) {
          entries = add(entries, walk(v));
        }
      }
      return entries;
    }
    return 0;
  }

  private static boolean containsContainers(Object element) {
    return element instanceof Collection<?> || element instanceof Map<?, ?>;
  }

  private static final ClassValue<Map<String, ValueBound>> FIELDS = new ClassValue<>() {
    @Override
    protected Map<String, ValueBound> computeValue(Class<?> type) {
      Map<String, ValueBound> fields = new LinkedHashMap<>();
      for (RecordComponent c : type.getRecordComponents()) {
        fields.put(c.getName(), of(c.getGenericType(), c.getAnnotation(PodView.Max.class)));
      }
      return Map.copyOf(fields);
    }
  };

  static Map<String, ValueBound> fields(Class<?> record) {
    return FIELDS.get(record);
  }

  private static ValueBound of(Type type, PodView.Max max) {
    if (type == String.class) {
      return string(max.length());
    }
    if (type instanceof Class<?> c) {
      return c.isRecord() ? record(c) : SCALAR;
    }
    ParameterizedType p = (ParameterizedType) type;
    Type[] args = p.getActualTypeArguments();
    if (p.getRawType() == List.class) {
      return list(max.items(), of(args[0], max));
    }
    return map(max.items(), string(max.keyLength()), string(max.length()));
  }
}
