// The generated harness: reads the tests' arguments (evaluation/languages/types.py,
// encode_tests), calls Solution on each, and writes one JSON event per line to fd 1.
// java.lang and java.util names are imported one by one: a single-type import shadows a class
// of the same name that the answer declares (class Node, class List...) in this package.
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.Boolean;
import java.lang.Character;
import java.lang.Class;
import java.lang.Double;
import java.lang.Error;
import java.lang.Exception;
import java.lang.ExceptionInInitializerError;
import java.lang.Integer;
import java.lang.Long;
import java.lang.Math;
import java.lang.Object;
import java.lang.OutOfMemoryError;
import java.lang.Override;
import java.lang.Runtime;
import java.lang.RuntimeException;
import java.lang.StackOverflowError;
import java.lang.StackTraceElement;
import java.lang.String;
import java.lang.StringBuilder;
import java.lang.System;
import java.lang.Thread;
import java.lang.Throwable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

final class @CLASS@ {
    static final int EXCERPT_CHARS = @EXCERPT_CHARS@;
    static final long PRINT_LIMIT = @PRINT_LIMIT@;
    static final int VALUE_LIMIT = @VALUE_LIMIT@;
    static final int MAX_DEPTH = @VALUE_DEPTH_LIMIT@;
    static final String ANSWER_FILE = "Solution.java";
    static final int ANSWER_OFFSET = @OFFSET@;

    static final FileOutputStream EVENTS = new FileOutputStream(FileDescriptor.out);
    static final InputStream IN = new FileInputStream(FileDescriptor.in);
    static final Printed PRINTED = new Printed();

    /** The answer returned something its declared type cannot carry as JSON. */
    static final class BadValue extends RuntimeException {
        BadValue(String message) { super(message, null, false, false); }
    }

    static final class TooLarge extends RuntimeException {
        TooLarge() { super("the return value is larger than @VALUE_LIMIT_MIB@ MiB", null, false, false); }
    }

    /** An Error, so that an answer's catch (Exception e) does not swallow it. */
    static final class OutputLimitExceeded extends Error {
        OutputLimitExceeded() { super("printed more than the output limit", null, false, false); }
    }

    /** Stands in for System.out and System.err: keeps an excerpt per test, caps the total. */
    static final class Printed extends OutputStream {
        long total;
        boolean exceeded;
        final byte[] excerpt = new byte[EXCERPT_CHARS * 4];
        int excerptLength;

        synchronized void begin() { excerptLength = 0; exceeded = false; }

        synchronized String take() {
            String text = new String(excerpt, 0, excerptLength, StandardCharsets.UTF_8);
            return text.length() > EXCERPT_CHARS ? text.substring(0, EXCERPT_CHARS) : text;
        }

        @Override public void write(int b) { write(new byte[] {(byte) b}, 0, 1); }

        @Override public synchronized void write(byte[] b, int off, int len) {
            total += len;
            if (total > PRINT_LIMIT) {
                exceeded = true;
                throw new OutputLimitExceeded();
            }
            int room = Math.min(len, excerpt.length - excerptLength);
            if (room > 0) {
                System.arraycopy(b, off, excerpt, excerptLength, room);
                excerptLength += room;
            }
        }
    }

    // ---- input: space-separated tokens, read lazily so line 2 is awaited only when needed

    static final byte[] buffer = new byte[1 << 16];
    static int length, position;

    static int peek() throws IOException {
        if (position == length) {
            length = IN.read(buffer, 0, buffer.length);
            position = 0;
            if (length <= 0) {
                length = 0;
                return -1;
            }
        }
        return buffer[position];
    }

    /** Skips separators; false at the end of the input. */
    static boolean more() throws IOException {
        int c;
        while ((c = peek()) == ' ' || c == '\n' || c == '\r') position++;
        return c != -1;
    }

    static String token() throws IOException {
        if (!more()) throw new IOException("the input ended early");
        StringBuilder text = new StringBuilder();
        int c;
        while ((c = peek()) != -1 && c != ' ' && c != '\n' && c != '\r') {
            text.append((char) c);
            position++;
        }
        return text.toString();
    }

    static long readLong() throws IOException {
        if (!more()) throw new IOException("the input ended early");
        boolean negative = peek() == '-';
        if (negative) position++;
        long value = 0;  // accumulated negative, so that Long.MIN_VALUE fits
        int c;
        while ((c = peek()) >= '0' && c <= '9') {
            value = value * 10 - (c - '0');
            position++;
        }
        return negative ? value : -value;
    }

    static int readSize() throws IOException { return (int) readLong(); }

    static boolean readBool() throws IOException { return readLong() != 0; }

    static double readDouble() throws IOException { return Double.parseDouble(token()); }

    static String readString() throws IOException {
        String hex = token();
        byte[] bytes = new byte[(hex.length() - 1) / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) Integer.parseInt(hex.substring(1 + 2 * i, 3 + 2 * i), 16);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    // ---- output: JSON by the declared return type

    static void writeDouble(StringBuilder out, double v) {
        // Double.toString writes NaN, Infinity and -Infinity as the bare words the parent reads.
        out.append(Double.toString(v));
    }

    /** A value declared String: null is not one. */
    static void writeText(StringBuilder out, String s) {
        if (s == null) throw new BadValue("returned null where String is declared");
        writeString(out, s);
    }

    static void writeString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20 || Character.isSurrogate(c)) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        out.append('"');
    }

    static void emit(String line) {
        try {
            EVENTS.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            Runtime.getRuntime().halt(1);
        }
    }

    static String text(String value) {
        StringBuilder out = new StringBuilder();
        writeString(out, value.length() > EXCERPT_CHARS ? value.substring(0, EXCERPT_CHARS) : value);
        return out.toString();
    }

    /** "Type: message (line N)", N the innermost line of the answer's own file. */
    static String describe(Throwable error) {
        String name = error.getClass().getSimpleName();
        if (name.isEmpty()) name = error.getClass().getName();
        String message;
        try {
            message = error.getMessage();
        } catch (Throwable t) {
            message = "<unprintable>";
        }
        String text = name + (message != null && !message.isEmpty() ? ": " + message : "");
        if (text.length() > EXCERPT_CHARS - 20) text = text.substring(0, EXCERPT_CHARS - 20);
        int line = answerLine(error);
        return line > 0 ? text + " (line " + line + ")" : text;
    }

    /** The innermost line of the answer's own text in the error's stack, or 0. */
    static int answerLine(Throwable error) {
        for (StackTraceElement frame : error.getStackTrace()) {
            if (ANSWER_FILE.equals(frame.getFileName()) && frame.getLineNumber() > ANSWER_OFFSET) {
                return frame.getLineNumber() - ANSWER_OFFSET;
            }
        }
        return 0;
    }

    static String millis(long nanos) {
        long hundredths = Math.round(nanos / 10_000.0);
        return hundredths / 100 + "." + (hundredths % 100 < 10 ? "0" : "") + hundredths % 100;
    }

    // ---- one test

    // A class loader of the answer's classes for one test, so every static field of theirs
    // starts as declared: JDK classes come from the platform loader, the box's from their files.
    static final class Fresh extends ClassLoader {
        Fresh() {
            super("answer", ClassLoader.getPlatformClassLoader());
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            String file = name.replace('.', '/') + ".class";
            try (InputStream in = @CLASS@.class.getClassLoader().getResourceAsStream(file)) {
                if (in == null) throw new ClassNotFoundException(name);
                byte[] bytes = in.readAllBytes();
                return defineClass(name, bytes, 0, bytes.length);
            } catch (IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }

    static Fresh next;  // the loader whose Solution the load check initialised, for the first test

    // Solution initialised in a new loader (its static initialisers run here, untimed), and
    // the bridge that calls it.
    @SuppressWarnings("unchecked")
    static Function<Object[], Object> fresh() throws Exception {
        Fresh loader = next != null ? next : new Fresh();
        next = null;
        Class.forName("Solution", true, loader);
        // Another loader's package: its class is not ours to reach without setAccessible.
        Class<?> bridge = Class.forName("InterviewPrepBridge", true, loader);
        java.lang.reflect.Constructor<?> make = bridge.getDeclaredConstructor();
        make.setAccessible(true);
        return (Function<Object[], Object>) make.newInstance();
    }

    static void test(int index, boolean detailed) throws IOException {
@READS@
        String status = "ok", message = null, value = null;
        long elapsed = 0;
        PRINTED.begin();
        try {
            Function<Object[], Object> answer = fresh();
            long started = System.nanoTime();
            @RESULT_TYPE@ result;
            try {
                result = (@RESULT_TYPE@) answer.apply(new Object[] {@ARGS@});
            } finally {
                elapsed = System.nanoTime() - started;
            }
            StringBuilder out = new StringBuilder();
            int depth = 0;  // of the value being written, for the writers' nesting limit
            try {
                @WRITE_RESULT@
                if (out.length() > VALUE_LIMIT) throw new TooLarge();
                value = out.toString();
            } catch (TooLarge e) {
                status = "output";
                message = e.getMessage();
            } catch (BadValue e) {
                status = "badvalue";
                message = e.getMessage();
            } catch (StackOverflowError e) {
                status = "badvalue";
                message = "the return value is nested too deeply";
            }
        } catch (OutOfMemoryError e) {
            status = "memory";
        } catch (Throwable e) {
            status = "error";
            message = describe(e);
        }
        if (PRINTED.exceeded) {
            status = "output";
            message = null;
            value = null;
        }
        StringBuilder event = new StringBuilder("{\"e\":\"test\",\"i\":").append(index);
        if (value != null) event.append(",\"v\":").append(value);
        event.append(",\"s\":\"").append(status).append("\",\"t\":").append(millis(elapsed));
        if (detailed) {
            event.append(",\"o\":").append(text(PRINTED.take()));
            if (message != null) event.append(",\"msg\":").append(text(message));
        }
        emit(event.append('}').toString());
    }

    static void run() throws IOException {
        PrintStream printed = new PrintStream(PRINTED, true, StandardCharsets.UTF_8);
        System.setOut(printed);
        System.setErr(printed);
        System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
        try {
            next = new Fresh();
            Class.forName("Solution", true, next);  // runs its static initialisers: an error there is a load error
        } catch (Throwable e) {
            Throwable cause = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
            int line = answerLine(cause);
            emit("{\"e\":\"load_error\",\"kind\":\"exception\",\"msg\":" + text(describe(cause))
                + ",\"line\":" + (line > 0 ? String.valueOf(line) : "null") + ",\"col\":null}");
            return;
        }
        emit("{\"e\":\"loaded\"}");
        int index = 0;
        for (int line = 0; line < 2 && more(); line++) {
            // Line 1: the shown tests (reported in detail); line 2, sent once they have all
            // reported: the hidden ones.
            int count = readSize();
            for (int i = 0; i < count; i++, index++) test(index, line == 0);
        }
        emit("{\"e\":\"done\"}");
    }

    public static void main(String[] args) throws Exception {
        Thread tests = new Thread(null, () -> {
            try {
                run();
            } catch (Throwable e) {
                emit("{\"e\":\"harness_error\",\"msg\":" + text(describe(e)) + "}");
            }
            // Not System.exit: no shutdown hook or thread of the answer's holds the process.
            Runtime.getRuntime().halt(0);
        }, "tests", @MAX_STACK@L << 20);
        tests.start();
        tests.join();
    }

@METHODS@}

// Every use of Solution is here, in a class of the box's that each test's loader defines anew.
final class InterviewPrepBridge implements Function<Object[], Object> {
    @BRIDGE@

    @Override
    @APPLY@

    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException rethrow(Throwable error) throws E {
        throw (E) error;  // the answer's own exception, checked or not, as it was thrown
    }
}
