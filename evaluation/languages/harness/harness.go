package main

// Generated test harness: reads each test's arguments from stdin (see encode_tests), calls
// the answer once per test and writes one JSON event per line to the events descriptor (a
// copy of fd 1 taken before fd 1 is pointed at a capture file for what the answer prints).

import (
	ipHarnessBufio "bufio"
	ipHarnessMath "math"
	ipHarnessOs "os"
	ipHarnessRuntime "runtime"
	ipHarnessDebug "runtime/debug"
@SORT@	ipHarnessStrconv "strconv"
	ipHarnessSyscall "syscall"
	ipHarnessTime "time"
	ipHarnessUtf8 "unicode/utf8"
)

// Lines put before the candidate's text in answer.go.
const ipHarnessAnswerOffset = @OFFSET@

// Each comment above its limit: gofmt would align trailing ones by the filled-in values.
const (
	// characters of printed text and of messages reported
	ipHarnessExcerpt = @EXCERPT_CHARS@
	// bytes the whole run may print (RLIMIT_FSIZE is the same)
	ipHarnessPrintLimit = @PRINT_LIMIT@
	// bytes of one encoded return value
	ipHarnessValueLimit  = @VALUE_LIMIT@
	ipHarnessCapturePath = "/tmp/ip-harness-printed"
)

var (
	ipHarnessIn      = ipHarnessBufio.NewReaderSize(ipHarnessOs.Stdin, 1<<16)
	ipHarnessEvents  *ipHarnessOs.File
	ipHarnessCapture int
	ipHarnessPrinted int64
	// Held so that the collector never finalizes (closes) fd 2 once os.Stderr is replaced.
	ipHarnessRealStderr = ipHarnessOs.Stderr
)

func main() {
	memoryMb := int64(256)
	if len(ipHarnessOs.Args) > 1 {
		if n, err := ipHarnessStrconv.ParseInt(ipHarnessOs.Args[1], 10, 64); err == nil && n > 0 {
			memoryMb = n
		}
	}
	// A soft heap limit, so the collector works harder before RLIMIT_DATA is reached, and a
	// stack limit well under it, so runaway recursion is a stack overflow, not out of memory.
	ipHarnessDebug.SetMemoryLimit(memoryMb << 20)
	ipHarnessDebug.SetMaxStack(int(memoryMb<<20) / 4)
	if err := ipHarnessSetup(); err != nil {
		ipHarnessEvents = ipHarnessOs.NewFile(1, "events")
		message := ipHarnessStringJSON(nil, err.Error(), ipHarnessExcerpt)
		ipHarnessEmit([]byte(`{"e":"harness_error","msg":` + string(message) + "}"))
		ipHarnessOs.Exit(3)
	}
	ipHarnessEmit([]byte(`{"e":"loaded"}`))
	index := 0
	shown := int(ipHarnessInt())
	for ; index < shown; index++ {
		ipHarnessTest(index, true)
	}
	// The hidden tests' line arrives only after every shown test has reported; EOF if none.
	if hidden, ok := ipHarnessTokenOrEOF(); ok {
		count, _ := ipHarnessStrconv.Atoi(hidden)
		for end := index + count; index < end; index++ {
			ipHarnessTest(index, false)
		}
	}
	ipHarnessEmit([]byte(`{"e":"done"}`))
}

func ipHarnessSetup() error {
	events, err := ipHarnessSyscall.Dup(1)
	if err != nil {
		return err
	}
	flags := ipHarnessSyscall.O_RDWR | ipHarnessSyscall.O_CREAT | ipHarnessSyscall.O_TRUNC | ipHarnessSyscall.O_CLOEXEC
	capture, err := ipHarnessSyscall.Open(ipHarnessCapturePath, flags, 0o600)
	if err != nil {
		return err
	}
	_ = ipHarnessSyscall.Unlink(ipHarnessCapturePath)
	if err := ipHarnessSyscall.Dup3(capture, 1, 0); err != nil {
		return err
	}
	ipHarnessSyscall.CloseOnExec(events)
	ipHarnessEvents = ipHarnessOs.NewFile(uintptr(events), "events")
	ipHarnessCapture = capture
	// os.Stdout already writes to fd 1. fd 2 stays the real stderr, where the runtime's fatal
	// errors (out of memory, stack overflow) must reach the parent; only the os.Stderr value
	// (fmt.Fprintln(os.Stderr, ...), log) is captured. The print/println builtins are not.
	ipHarnessOs.Stderr = ipHarnessOs.NewFile(uintptr(capture), "/dev/stderr")
	return nil
}

func ipHarnessEmit(line []byte) {
	_, _ = ipHarnessEvents.Write(append(line, '\n'))
}

// ipHarnessTest runs one test and reports it; `shown` tests also report output and message.
func ipHarnessTest(index int, shown bool) {
@READ_ARGS@
	_ = ipHarnessSyscall.Ftruncate(1, 0)
	_, _ = ipHarnessSyscall.Seek(1, 0, 0)
	status, message := "ok", ""
	value, failure, elapsed := ipHarnessCall(@ARGS@)
	if failure != "" {
		status, message = "error", failure
	}
	size, _ := ipHarnessSyscall.Seek(1, 0, 1)
	ipHarnessPrinted += size
	// A write past RLIMIT_FSIZE fails (Go ignores SIGXFSZ), so a full file means more was tried.
	if size > 0 && (ipHarnessPrinted > ipHarnessPrintLimit || size >= ipHarnessPrintLimit) {
		status, message = "output", "printed more than the output limit"
	}
	event := ipHarnessStrconv.AppendInt([]byte(`{"e":"test","i":`), int64(index), 10)
	if status == "ok" {
		encoded := ipHarnessWrite@RETURN@(make([]byte, 0, 64), value)
		if len(encoded) > ipHarnessValueLimit {
			status, message = "output", "the return value is larger than @VALUE_LIMIT_MIB@ MiB"
		} else {
			event = append(append(event, `,"v":`...), encoded...)
		}
	}
	event = append(append(append(event, `,"s":"`...), status...), `","t":`...)
	milliseconds := ipHarnessMath.Round(float64(elapsed.Nanoseconds())/1e4) / 100
	event = ipHarnessStrconv.AppendFloat(event, milliseconds, 'f', -1, 64)
	if shown {
		event = ipHarnessStringJSON(append(event, `,"o":`...), ipHarnessPrintedText(size), ipHarnessExcerpt)
		if message != "" {
			event = ipHarnessStringJSON(append(event, `,"msg":`...), message, ipHarnessExcerpt)
		}
	}
	ipHarnessEmit(append(event, '}'))
}

// ipHarnessCall calls the answer; a panic becomes a message, with the answer's line.
func ipHarnessCall(@PARAMS@) (value @RETURN_TYPE@, failure string, elapsed ipHarnessTime.Duration) {
	started := ipHarnessTime.Now()
	defer func() {
		elapsed = ipHarnessTime.Since(started)
		if caught := recover(); caught != nil {
			// Still on the panicking goroutine's stack: the answer's frames are below us.
			failure = ipHarnessPanicText(caught) + ipHarnessAnswerLine()
		}
	}()
	value = ipHarnessEntry(@ARGS@)
	return
}

func ipHarnessPanicText(caught interface{}) (text string) {
	defer func() {
		if recover() != nil { // the panic value's own Error or String method panicked
			text = "panic: (a value that cannot be printed)"
		}
	}()
	switch v := caught.(type) {
	case error: // runtime errors read "runtime error: index out of range [3] with length 3"
		return "panic: " + v.Error()
	case string:
		return "panic: " + v
	case interface{ String() string }:
		return "panic: " + v.String()
	case int:
		return "panic: " + ipHarnessStrconv.Itoa(v)
	case int64:
		return "panic: " + ipHarnessStrconv.FormatInt(v, 10)
	case float64:
		return "panic: " + ipHarnessStrconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "panic: " + ipHarnessStrconv.FormatBool(v)
	}
	return "panic: (a value that is not an error or text)"
}

// ipHarnessAnswerLine: " (line N)" for the innermost frame in answer.go, or "".
func ipHarnessAnswerLine() string {
	pcs := make([]uintptr, 64)
	frames := ipHarnessRuntime.CallersFrames(pcs[:ipHarnessRuntime.Callers(1, pcs)])
	for {
		frame, more := frames.Next()
		file := frame.File
		if len(file) >= 9 && file[len(file)-9:] == "answer.go" && (len(file) == 9 || file[len(file)-10] == '/') {
			if line := frame.Line - ipHarnessAnswerOffset; line > 0 {
				return " (line " + ipHarnessStrconv.Itoa(line) + ")"
			}
		}
		if !more {
			return ""
		}
	}
}

// ipHarnessPrintedText: the start of what this test printed, as text.
func ipHarnessPrintedText(size int64) string {
	if size <= 0 {
		return ""
	}
	buffer := make([]byte, 4*ipHarnessExcerpt)
	n, _ := ipHarnessSyscall.Pread(ipHarnessCapture, buffer, 0)
	if n < 0 {
		n = 0
	}
	return string(buffer[:n])
}

// Tokens are separated by one space; the last one of a line ends with its newline, so
// reading never asks for more input than the current line.
func ipHarnessTokenOrEOF() (string, bool) {
	var token []byte
	for {
		c, err := ipHarnessIn.ReadByte()
		if err != nil {
			return string(token), len(token) > 0
		}
		if c == ' ' || c == '\n' {
			return string(token), true
		}
		token = append(token, c)
	}
}

func ipHarnessToken() string {
	token, ok := ipHarnessTokenOrEOF()
	if !ok {
		panic("the tests' input ended early")
	}
	return token
}

func ipHarnessInt() int64 {
	v, err := ipHarnessStrconv.ParseInt(ipHarnessToken(), 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

func ipHarnessFloat() float64 {
	v, err := ipHarnessStrconv.ParseFloat(ipHarnessToken(), 64)
	if err != nil {
		panic(err)
	}
	return v
}

// ipHarnessString reads "x" followed by the hex of the text's UTF-8 bytes.
func ipHarnessString() string {
	token := ipHarnessToken()
	out := make([]byte, (len(token)-1)/2)
	for i := range out {
		out[i] = ipHarnessHexDigit(token[1+2*i])<<4 | ipHarnessHexDigit(token[2+2*i])
	}
	return string(out)
}

func ipHarnessHexDigit(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// ipHarnessFloatJSON writes a float as JSON, NaN and the infinities as bare words.
func ipHarnessFloatJSON(b []byte, v float64) []byte {
	switch {
	case ipHarnessMath.IsNaN(v):
		return append(b, "NaN"...)
	case ipHarnessMath.IsInf(v, 1):
		return append(b, "Infinity"...)
	case ipHarnessMath.IsInf(v, -1):
		return append(b, "-Infinity"...)
	}
	start := len(b)
	b = ipHarnessStrconv.AppendFloat(b, v, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, ".0"...) // still a float once parsed
}

// ipHarnessStringJSON writes a JSON string of at most `limit` characters (-1: all);
// invalid UTF-8 becomes U+FFFD.
func ipHarnessStringJSON(b []byte, s string, limit int) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for count := 0; len(s) > 0 && count != limit; count++ {
		r, size := ipHarnessUtf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20 || r == 0x2028 || r == 0x2029: // the last two end lines for some readers
			b = append(b, '\\', 'u', hex[r>>12], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			b = ipHarnessUtf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

@READERS@@WRITERS@// Last in the file: the directive below renames this line's "file" for the compiler, so an
// error here (no such function, another type) names the declaration the answer must have.

//line @EXPECTED@:1
var ipHarnessEntry @ENTRY_TYPE@ = @ENTRY@
