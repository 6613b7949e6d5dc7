package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heraldpush/herald/client"
)

// The exit codes of herald send: each outcome of the message its own, so
// that a script tells them apart without reading the output.
const (
	exitDelivered = 0 // the platform accepted the message
	exitNotSent   = 1 // nothing was sent: a wrong command line, or no server reached
	exitRefused   = 2 // the server refused the request: nothing was charged, queued or sent
	exitFailed    = 3 // not delivered, and will not be: the platform refused it, or its job was canceled or expired
	exitPending   = 4 // accepted and still queued or sending (without --wait, or when --timeout ended the wait)
	exitUncertain = 5 // the platform may have received it: check, do not resend
	exitUnknown   = 6 // the request may have reached the server but no answer was read
)

// exitCodes documents the exit codes in the help and the README.
const exitCodes = `Exit codes:
  0  delivered: the platform accepted the message
  1  not sent: a wrong command line, or the server could not be reached (nothing was sent)
  2  refused: the server refused the request (4xx, or 429/503 after retries); nothing was charged, queued or sent
  3  failed: not delivered and will not be (the platform refused it; or its job was canceled or expired)
  4  pending: accepted, still queued or being sent; follow it with --wait, do not send it again
  5  uncertain: the platform may have received it; check the chat and resolve the job, do not send it again
  6  unknown: the request may have reached the server but its answer was lost; run the same command
     with the --key-id it printed (the server answers from its record and never sends twice)

--key is the API key (HERALD_API_KEY); --key-id is the send's Idempotency-Key, which makes a
resubmission of the same message safe.`

// sendOutput is what herald send --json prints: the result, and the
// server's refusal or the unknown result's cause.
type sendOutput struct {
	client.Result
	Error *sendError `json:"error,omitempty"`
}

// sendError is the error part of herald send --json.
type sendError struct {
	Status  int    `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

// sendFlags are herald send's flags.
type sendFlags struct {
	url, apiKey, keyID, image string
	bot, target               int64
	markdown, wait, asJSON    bool
	timeout                   time.Duration
}

// sendCmd runs `herald send`: one message through a running server's
// API, like ntfy publish or gotify push, built on the client package.
// The exit code tells the outcome (exitDelivered…).
func sendCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("send")
	var f sendFlags
	fs.StringVar(&f.url, "url", "", "the server's API base URL, e.g. https://push.example.com/api")
	fs.StringVar(&f.apiKey, "key", "", "the API key of the account (sent as Authorization: Bearer); prefer the environment, which other users cannot see")
	fs.Int64Var(&f.bot, "bot", 0, "the bot id")
	fs.Int64Var(&f.target, "target", 0, "the target id (leave out for the platforms without targets: push relays, workplace webhooks)")
	fs.BoolVar(&f.markdown, "markdown", false, "send the text as Markdown (msgType 2)")
	fs.StringVar(&f.image, "image", "", "send the image at this URL (msgType 7); a text, if given, is its caption")
	fs.StringVar(&f.keyID, "key-id", "", "the send's Idempotency-Key, 1 to 100 of letters, digits, '_', ':' and '-' (default: a new random one, printed); the same key again never sends twice")
	fs.BoolVar(&f.wait, "wait", false, "when the message is still being sent after the server's synchronous wait, wait until it is delivered, fails or becomes uncertain")
	fs.DurationVar(&f.timeout, "timeout", 0, "how long the command may take in all, --wait included (0: no limit)")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object (outcome, key, jobId, status, …, and error)")
	err := parseFlagsAndArgs(fs, args, sendTwins())
	var help *helpRequest
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text)
		return exitDelivered
	}
	if err == nil {
		err = f.check()
	}
	var text string
	if err == nil {
		text, err = sendText(fs.Args(), f.image != "", stdin)
	}
	if err != nil {
		fmt.Fprintln(stderr, "herald send:", err)
		return exitNotSent
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	c, err := client.New(f.url, client.Options{APIKey: f.apiKey, UserAgent: "herald-send"})
	if err != nil {
		fmt.Fprintln(stderr, "herald send: --url:", err)
		return exitNotSent
	}
	defer c.Close()
	m := client.Message{BotID: f.bot, TargetID: f.target, Content: text, ImageURL: f.image, Key: f.keyID}
	switch {
	case f.image != "":
		m.Type = client.Image
	case f.markdown:
		m.Type = client.Markdown
	}
	res, err := c.Send(ctx, m)
	if err == nil && f.wait && res.Outcome == client.Pending {
		j, werr := c.Wait(ctx, res.JobID)
		if j.ID != "" {
			res = settle(res, j)
		}
		if werr != nil {
			// The message was accepted: it stays pending, whatever
			// stopped the wait (--timeout, an interrupt, the network).
			res.Detail = "the wait stopped: " + werr.Error()
		}
	}
	return reportSend(stdout, stderr, f.asJSON, res, err)
}

// check refuses flags that cannot make a send.
func (f sendFlags) check() error {
	switch {
	case f.url == "":
		return errors.New("--url (or HERALD_URL) is required: the server's API base URL, e.g. http://127.0.0.1:8080/api")
	case f.apiKey == "":
		return errors.New("--key (or HERALD_API_KEY) is required: the account's API key")
	case f.bot <= 0:
		return errors.New("--bot is required: the id of the bot that sends")
	case f.target < 0:
		return errors.New("--target must be a target id (a positive number), or left out")
	case f.markdown && f.image != "":
		return errors.New("--markdown and --image cannot be combined: an image's caption is plain text")
	}
	return nil
}

// sendText is the message's text: the arguments joined by spaces, or
// standard input for none (unless an image is sent, whose caption is
// optional) or "-", without its trailing newlines.
func sendText(args []string, image bool, stdin io.Reader) (string, error) {
	if len(args) == 0 && image {
		return "", nil
	}
	if len(args) > 0 && (len(args) != 1 || args[0] != "-") {
		return strings.Join(args, " "), nil
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return "", fmt.Errorf("read the text from standard input: %w", err)
	}
	text := strings.TrimRight(string(data), "\r\n")
	if text == "" && !image {
		return "", errors.New("no text: give it as an argument, or on standard input")
	}
	return text, nil
}

// settle updates a send's result with its job as Wait left it.
func settle(res client.Result, j client.Job) client.Result {
	res.Outcome = j.Outcome
	res.Status = strings.ToUpper(string(j.State))
	if j.State == client.StateSucceeded {
		res.Status = "SUCCESS"
	}
	res.PlatformIndex, res.Detail = j.PlatformIndex, j.Error
	return res
}

// reportSend prints a send's result (one line, or JSON) and returns its
// exit code.
func reportSend(stdout, stderr io.Writer, asJSON bool, res client.Result, err error) int {
	code := exitCodeOf(res, err)
	if asJSON {
		out := sendOutput{Result: res}
		if err != nil {
			out.Error = &sendError{Message: err.Error()}
			var he *client.Error
			if errors.As(err, &he) {
				out.Error.Status, out.Error.Reason, out.Error.Message = he.Status, string(he.Reason), he.Message
			}
		}
		if perr := printJSON(stdout, out); perr != nil {
			fmt.Fprintln(stderr, "herald send:", perr)
		}
		return code
	}
	job := ""
	if res.JobID != "" {
		job = " (job " + res.JobID + ", key " + res.Key + ")"
	}
	switch code {
	case exitDelivered:
		fmt.Fprintf(stdout, "delivered%s\n", job)
	case exitFailed:
		fmt.Fprintf(stdout, "failed: %s%s\n", res.Detail, job)
	case exitPending:
		fmt.Fprintf(stdout, "pending: still being sent%s; do not send it again: follow it with --wait and --key-id %s\n", job, res.Key)
	case exitUncertain:
		fmt.Fprintf(stdout, "uncertain: the platform may have received it%s; check the chat and resolve the job, do not send it again\n", job)
	case exitRefused:
		fmt.Fprintf(stderr, "herald send: refused: %v\n", err)
	case exitUnknown:
		fmt.Fprintf(stderr, "herald send: the result is unknown: %v\nDo not send it under a new key: run the same command with --key-id %s\n", err, res.Key)
	default:
		fmt.Fprintf(stderr, "herald send: not sent: %v\n", err)
	}
	return code
}

// exitCodeOf maps a send's result to herald send's exit code.
func exitCodeOf(res client.Result, err error) int {
	switch {
	case errors.Is(err, client.ErrUnknownResult):
		return exitUnknown
	case res.Outcome == client.Refused:
		return exitRefused
	case err != nil:
		return exitNotSent
	}
	switch res.Outcome {
	case client.Delivered:
		return exitDelivered
	case client.Failed:
		return exitFailed
	case client.Pending:
		return exitPending
	case client.Uncertain:
		return exitUncertain
	}
	return exitUnknown
}

// sendTwins are the environment twins of herald send's flags: the server
// and the API key, as the other tools of a push service name them
// (HERALD_API_KEY, not HERALD_KEY); the message's flags have none.
func sendTwins() map[string]string {
	return map[string]string{"url": envName("url"), "key": "HERALD_API_KEY"}
}
