package io.podsweeper.kube;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The API server's protobuf, as far as a list of pods needs it: the envelope, a list's metadata and its items, and
 * the wire format's primitives for reading a message field by field (protobuf-java's {@link CodedInputStream}).
 *
 * <p>Why protobuf: client-go asks for it, and the JSON of 10,000 pods took a fresh JVM about 0.9 CPU-seconds to
 * decode, plus what C1 spent compiling the decoder (docs/benchmarks.md). Protobuf has no field names to match and no
 * numbers or timestamps in text, and is about half the bytes. Only lists are asked for in it: watches come as JSON, a
 * pod at a time ({@link StreamedWatch}).
 *
 * <p>The layout (k8s.io/apimachinery's runtime.Unknown, and every {@code *List} of k8s.io/api): the bytes "k8s\0",
 * then an Unknown whose field 2 ({@code raw}) holds the list; a list's field 1 is its ListMeta (resourceVersion 2,
 * continue 3, remainingItemCount 4), field 2 each of its items. The API server writes fields in their numbers' order,
 * so a list's metadata comes before its items.
 */
final class KubeProtobuf {
  /** What a client that reads a list as protobuf, and anything else as JSON, asks for (as client-go does). */
  static final String ACCEPT = "application/vnd.kubernetes.protobuf, application/json";
  private static final byte[] MAGIC = {'k', '8', 's', 0};
  private static final int BUFFER = 64 * 1024;

  private KubeProtobuf() {}

  /** A list's metadata and items, as read. */
  record ListPage<T>(String resourceVersion, String continueToken, Long remainingItemCount, List<T> items) {}

  /** Reads one message: the stream is limited to it. */
  @FunctionalInterface
  interface MessageReader<T> {
    T read(CodedInputStream in) throws IOException;
  }

  /** Reads one field of a message: its number, and its tag, whose value the reader reads or skips. */
  @FunctionalInterface
  interface FieldReader {
    void field(int number, int tag, CodedInputStream in) throws IOException;
  }

  /** The body as read so far, its first bytes given back: whether it is the API server's protobuf, and the stream. */
  record Body(boolean protobuf, InputStream in) {}

  /** Looks at a response's first bytes: protobuf if they are the magic bytes. */
  static Body body(InputStream in) throws IOException {
    PushbackInputStream body = new PushbackInputStream(in, MAGIC.length);
    byte[] first = body.readNBytes(MAGIC.length);
    body.unread(first);
    return new Body(Arrays.equals(first, MAGIC), body);
  }

  /** A list, each item read by {@code item}; the stream is at the envelope's magic bytes. */
  static <T> ListPage<T> list(InputStream body, MessageReader<T> item) throws IOException {
    ListReading<T> list = new ListReading<>(item);
    envelope(body, list::field);
    return new ListPage<>(list.resourceVersion, list.continueToken, list.remaining, list.items);
  }

  /**
   * A list's continue token, read no further than its metadata (the list's first field), so that a page's items are
   * not inflated twice; the stream is at the envelope's magic bytes.
   */
  static Optional<String> continueToken(InputStream body) throws IOException {
    CodedInputStream in = afterMagic(body);
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      if (WireFormat.getTagFieldNumber(tag) != 2) {
        in.skipField(tag);
        continue;
      }
      lengthDelimited(tag);
      in.readRawVarint32(); // the list's length: nothing after its metadata is read
      int first = in.readTag();
      if (WireFormat.getTagFieldNumber(first) != 1) {
        return Optional.empty();
      }
      String[] token = {null};
      message(in, first, (number, t, q) -> {
        if (number == 3) {
          token[0] = text(q, t);
        } else {
          q.skipField(t);
        }
      });
      return Optional.ofNullable(token[0]);
    }
    return Optional.empty();
  }

  private static final class ListReading<T> {
    final MessageReader<T> item;
    String resourceVersion;
    String continueToken;
    Long remaining;
    final List<T> items = new ArrayList<>();

    ListReading(MessageReader<T> item) {
      this.item = item;
    }

    void field(int number, int tag, CodedInputStream in) throws IOException {
      switch (number) {
        case 1 -> message(in, tag, (field, t, q) -> {
          switch (field) {
            case 2 -> resourceVersion = text(q, t);
            case 3 -> continueToken = text(q, t);
            case 4 -> remaining = int64(q, t);
            default -> q.skipField(t);
          }
        });
        case 2 -> {
          // Each item read in place, limited to its bytes (not from a copy of them: at 10k pods a copy was the most
          // garbage a start made); a reader that gives up on one leaves the stream where it stopped, maybe inside a
          // message of the item's, so the stream goes back to the list's limit and past what the reader left.
          lengthDelimited(tag);
          int length = in.readRawVarint32();
          int end = in.getTotalBytesRead() + length;
          int listLimit = in.pushLimit(length);
          T read = item.read(in);
          in.popLimit(listLimit);
          in.skipRawBytes(end - in.getTotalBytesRead());
          items.add(read);
        }
        default -> in.skipField(tag);
      }
    }
  }

  /**
   * The Status of a failed request, if the API server wrote it as protobuf (as it does when protobuf was asked for):
   * its status, message, reason and code (k8s.io/apimachinery's meta/v1 Status: 2, 3, 4 and 6), so that the error
   * says what the server said; a Status without a code gets the response's. Empty for anything else, which fabric8
   * reads as it reads any error.
   */
  static Optional<Status> status(byte[] body, int httpCode) {
    if (body == null || body.length < MAGIC.length || !Arrays.equals(body, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
      return Optional.empty();
    }
    StatusBuilder status = new StatusBuilder().withCode(httpCode);
    try {
      envelope(new ByteArrayInputStream(body), (number, tag, in) -> {
        switch (number) {
          case 2 -> status.withStatus(text(in, tag));
          case 3 -> status.withMessage(text(in, tag));
          case 4 -> status.withReason(text(in, tag));
          case 6 -> status.withCode(int32(in, tag));
          default -> in.skipField(tag);
        }
      });
      return Optional.of(status.build());
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** Reads the object in the envelope (its raw bytes, field 2 of the Unknown) field by field. */
  private static void envelope(InputStream body, FieldReader object) throws IOException {
    fields(afterMagic(body), (number, tag, q) -> {
      if (number == 2) {
        message(q, tag, object);
      } else {
        q.skipField(tag);
      }
    });
  }

  private static CodedInputStream afterMagic(InputStream body) throws IOException {
    if (!Arrays.equals(body.readNBytes(MAGIC.length), MAGIC)) {
      throw new IOException("not the API server's protobuf: it does not begin with \"k8s\\0\"");
    }
    return CodedInputStream.newInstance(body, BUFFER);
  }

  /** Each field of the message the stream is limited to, to its end. */
  static void fields(CodedInputStream in, FieldReader reader) throws IOException {
    for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
      reader.field(WireFormat.getTagFieldNumber(tag), tag, in);
    }
  }

  /** The embedded message at the stream (a length-delimited field of tag {@code tag}), each of its fields read. */
  static void message(CodedInputStream in, int tag, FieldReader reader) throws IOException {
    lengthDelimited(tag);
    int limit = in.pushLimit(in.readRawVarint32());
    fields(in, reader);
    in.popLimit(limit);
  }

  /** The string field {@code number} of the embedded message at the stream (as {@link #text}), the rest skipped; null if absent. */
  static String textField(CodedInputStream in, int tag, int number) throws IOException {
    return oneField(in, tag, number, KubeProtobuf::text, null);
  }

  /** The int64 field {@code number} of the embedded message at the stream, the rest skipped; empty if absent. */
  static OptionalLong int64Field(CodedInputStream in, int tag, int number) throws IOException {
    return oneField(in, tag, number, (q, t) -> OptionalLong.of(int64(q, t)), OptionalLong.empty());
  }

  /** Reads the value of a field: its tag read, the stream at the value. */
  @FunctionalInterface
  interface ValueReader<T> {
    T read(CodedInputStream in, int tag) throws IOException;
  }

  private static <T> T oneField(CodedInputStream in, int tag, int number, ValueReader<T> reader, T absent) throws IOException {
    lengthDelimited(tag);
    int limit = in.pushLimit(in.readRawVarint32());
    T value = absent;
    for (int field = in.readTag(); field != 0; field = in.readTag()) {
      if (WireFormat.getTagFieldNumber(field) == number) {
        value = reader.read(in, field);
      } else {
        in.skipField(field);
      }
    }
    in.popLimit(limit);
    return value;
  }

  /** A string field; null for an empty one, as the API server's JSON leaves out an empty omitempty field. */
  static String text(CodedInputStream in, int tag) throws IOException {
    lengthDelimited(tag);
    String text = in.readString();
    return text.isEmpty() ? null : text;
  }

  /** A varint field of 32 bits (int32, bool as 0 or 1). */
  static int int32(CodedInputStream in, int tag) throws IOException {
    varint(tag);
    return in.readInt32();
  }

  /** A varint field of 64 bits (int64). */
  static long int64(CodedInputStream in, int tag) throws IOException {
    varint(tag);
    return in.readInt64();
  }

  private static void varint(int tag) {
    if (WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_VARINT) {
      throw new IllegalArgumentException("field " + WireFormat.getTagFieldNumber(tag) + " is not a number");
    }
  }

  private static void lengthDelimited(int tag) {
    if (WireFormat.getTagWireType(tag) != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
      throw new IllegalArgumentException("field " + WireFormat.getTagFieldNumber(tag) + " is not a string or a message");
    }
  }
}
