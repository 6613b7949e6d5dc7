package transport

import (
	"fmt"

	"github.com/heraldpush/herald/push"
)

// The schemas of the management API's objects, shared by its sections.

func timeField(desc string) Schema { return str(desc+" (RFC 3339, UTC).").with("format", "date-time") }

func idField(desc string) Schema { return integer(desc).with("minimum", 1) }

func roleSchema() Schema {
	return str("member (acts within its account) or operator (runs the service: every account).").with("enum", []string{"member", "operator"})
}

// manageEnvelope is the answer of a management request: code 0 and data.
func manageEnvelope(desc, data string) Schema {
	return object(desc, true,
		req("code", integer("0: done.").with("const", 0)),
		req("message", str("Empty, or a note on what was done.")),
		req("data", ref(data)))
}

// listSchema is a page of a list of objects of the named schema.
func listSchema(item string) Schema {
	return object("A page of the list, newest first.", true,
		req("items", array(ref(item), "The page's items.")),
		req("next", str("The cursor of the next page: pass it as ?cursor= (empty on the last page).")),
	)
}

// objectSchemas are the management API's objects, with an answer envelope
// (<Name>Response) and, for lists, a page (<Name>List, <Name>ListResponse)
// of each.
func objectSchemas() map[string]Schema {
	objects := map[string]Schema{
		"Account": object("An account: it owns keys, bots, targets, jobs and a points balance.", true,
			req("id", idField("Account id.")),
			req("name", str("The account's name.")),
			req("status", str("active, or suspended (its keys and sessions are refused).").with("enum", []string{"active", "suspended"})),
			req("points", integer("The points balance.").with("minimum", 0)),
			req("createdAt", timeField("When it was made"))),
		"User": object("A person who signs in.", true,
			req("id", idField("User id.")),
			req("accountId", idField("The user's account.")),
			req("email", str("The email address the user signs in with.")),
			req("role", roleSchema()),
			req("createdAt", timeField("When the user was made")),
			req("passwordChangedAt", timeField("When the password was last set")),
			req("signedInAt", timeField("The last sign-in; null: never").orNull())),
		"Session": object("A signed-in session. Its token lives only in the browser's cookie.", true,
			req("id", idField("Session id.")),
			req("current", boolean("True for the session of this request.")),
			req("createdAt", timeField("When it signed in")),
			req("seenAt", timeField("Its last request, within a minute")),
			req("expiresAt", timeField("When it ends at the latest; it ends sooner when unused for the idle time")),
			req("revokedAt", timeField("When it was signed out or ended; null while it lasts").orNull()),
			req("address", str("Where it signed in from.")),
			req("agent", str("The browser it signed in with."))),
		"Key": object("An API key: only its prefix and last four characters are kept to tell it apart.", true,
			req("id", idField("Key id.")),
			req("accountId", idField("The key's account.")),
			req("name", str("A name to tell it apart.")),
			req("role", roleSchema()),
			req("prefix", str("The part before the underscore.")),
			req("hint", str("The last four characters.")),
			req("createdAt", timeField("When it was made")),
			req("expiresAt", timeField("When it expires; null: never").orNull()),
			req("revokedAt", timeField("When it was revoked; null: it was not").orNull())),
		"Invite": object("A one-time code to sign up with. Only its last four characters are kept.", true,
			req("id", idField("Invite id.")),
			req("accountId", idField("The account the sign-up joins; null: it makes an account of its own").orNull()),
			req("role", roleSchema()),
			req("email", str("The only address that may use it; empty: any.")),
			req("hint", str("The code's last four characters.")),
			req("createdBy", str("Who made it.")),
			req("createdAt", timeField("When it was made")),
			req("expiresAt", timeField("When it expires")),
			req("usedAt", timeField("When it was used; null: not yet").orNull()),
			req("revokedAt", timeField("When it was revoked; null: it was not").orNull())),
		"Bot": object("A bot: it sends on one platform with its account's credentials, which no answer shows.", true,
			req("id", idField("Bot id.")),
			req("accountId", idField("The bot's account.")),
			req("platform", str("The platform, e.g. telegram.")),
			req("name", str("The bot's name.")),
			req("createdAt", timeField("When it was made")),
			req("updatedAt", timeField("When its name or credentials last changed; null: never").orNull())),
		"Target": object("A target bound to a bot: a user or a group on the platform.", true,
			req("id", idField("Target id (the target of a send).")),
			req("botId", idField("The bot it is bound to.")),
			req("type", str("user or group.").with("enum", []string{"user", "group"})),
			req("address", str("The platform's id of the user or group.")),
			req("name", str("A name to tell it apart.")),
			req("createdAt", timeField("When it was bound")),
			req("presence", str("active, or gone when the chat blocked, unfollowed or removed the bot (sends to it are refused, charged nothing, until it comes back).").with("enum", []string{"active", "gone"})),
			req("presenceAt", timeField("When it went (or came back); null: never").orNull()),
			req("presenceNote", str("Why it is gone, as the platform said."))),
		"BindCode": object("A one-time code a person sends to the bot (or follows its link) to bind the chat as a target. Only its last three characters are kept.", true,
			req("id", idField("Bind code id.")),
			req("botId", idField("The bot.")),
			req("hint", str("The code's last three characters.")),
			req("type", str("The chats it binds: user, group, or empty for either.").with("enum", []string{"", "user", "group"})),
			req("usesLeft", integer("Chats it can still bind.").with("minimum", 0)),
			req("createdBy", str("Who made it.")),
			req("createdAt", timeField("When it was made")),
			req("expiresAt", timeField("When it expires")),
			req("revokedAt", timeField("When it was revoked; null: it was not").orNull()),
			req("lastTargetId", idField("The target it bound last; null: none yet").orNull())),
		"ReceiverStatus": object("How a bot hears its users.", true,
			req("mode", str("none, outbound (the server polls or holds a gateway: no public address needed) or webhook (the platform calls the bot's webhook).").with("enum", []string{"none", "outbound", "webhook"})),
			req("running", boolean("True when a node runs the receiver (outbound), or the webhook takes requests.")),
			req("failures", integer("The receiver's failures in a row; it is retried with a growing wait.").with("minimum", 0)),
			req("error", str("The last failure's error.")),
			req("failedAt", timeField("When it last failed; null: never").orNull()),
			req("lastEventAt", timeField("The last event received; null: none").orNull()),
			req("webhookPath", str("Where the platform sends the webhook's requests, below the server's public URL (webhook mode).")),
			req("targets", countOf("Bound targets.")),
			req("gone", countOf("Targets that are gone.")),
			req("reachable", countOf("Targets a send can reach now (on a platform that takes replies only: those that wrote within the reply window)."))),
		"LedgerEntry": object("One movement of an account's points.", true,
			req("id", idField("Entry id.")),
			req("accountId", idField("The account.")),
			req("jobId", str("The job of a charge or a refund; null for others.").with("format", "uuid").orNull()),
			req("kind", str("charge, refund, initial, grant, adjust, or summary: the charges and refunds of one month's jobs, summed when the jobs were deleted after the job retention.").with("enum", []string{"charge", "refund", "initial", "grant", "adjust", "summary"})),
			req("amount", integer("Points added (negative: taken).")),
			req("at", timeField("When")),
			req("note", str("Why: a grant's reason, what an initial entry is."))),
		"AuditEntry": object("One change made through the management verbs. It never holds a secret.", true,
			req("id", idField("Entry id.")),
			req("accountId", idField("The account of the object; null for the service's").orNull()),
			req("actor", str("Who made it: a user, a key, or the system.")),
			req("action", str("What was done, e.g. bot.update.")),
			req("object", str("What it was done to.")),
			req("address", str("Where the request came from.")),
			req("at", timeField("When"))),
		"Platform": object("A platform this server sends on.", true,
			req("name", str("Its name, the platform of a bot.")),
			req("targets", boolean("True when its bots send to bound targets; false when a bot has one destination.")),
			req("targetTypes", array(str("").with("enum", []string{"user", "group"}), "The target types it can bind.")),
			req("verifies", boolean("True when it can verify bot credentials with the platform without sending (some configs may still be unverifiable: a WeCom robot, an ntfy bot without credentials)."))),
	}
	out := make(map[string]Schema, 4*len(objects))
	for name, s := range objects {
		out[name] = s
		out[name+"Response"] = manageEnvelope("The "+name+".", name)
		out[name+"List"] = listSchema(name)
		out[name+"ListResponse"] = manageEnvelope("A page of "+name+" objects.", name+"List")
	}
	return out
}

// manageJobSchemas are a job as the management API shows it.
func manageJobSchemas(p schemaParts) map[string]Schema {
	fields := jobFields(p)
	fields = append(fields,
		req("accountId", idField("The job's account.")),
		req("platform", str("The bot's platform.")),
		req("targetType", str("The type it was sent as; empty without a target.")),
		req("content", str("The message's content.")),
		req("imageUrl", str("The image's URL; empty for text and Markdown.")),
		req("idempotencyKey", str("The Idempotency-Key of its send; empty when none was given.")),
		req("cost", integer("Points charged for it.").with("minimum", 0)),
		req("resolvedAt", timeField("When an uncertain job was resolved; null: it was not").orNull()),
		req("resolvedBy", str("Who resolved it.")),
		req("note", str("The note given when it was resolved.")),
		req("history", array(object("One move of the job's life.", true,
			req("state", str("The state it moved to.").with("enum", jobStates())),
			req("at", timeField("When")),
			opt("by", str("Who made the move (a resolution).")),
			opt("note", str("The note of a resolution."))), "The moves of its life, oldest first.")),
	)
	return map[string]Schema{
		"ManagedJob":             object("A job, with what it sent and the moves of its life.", true, fields...),
		"ManagedJobResponse":     manageEnvelope("The job.", "ManagedJob"),
		"ManagedJobList":         listSchema("ManagedJob"),
		"ManagedJobListResponse": manageEnvelope("A page of jobs.", "ManagedJobList"),
	}
}

// pageParams are the parameters of every list.
func pageParams() []Param {
	return []Param{
		{Name: "limit", In: "query", Description: fmt.Sprintf("Items on the page: 1 to %d (default %d).", push.MaxPageSize, push.DefaultPageSize),
			Schema: integer("").with("minimum", 0, "maximum", push.MaxPageSize), Example: "50"},
		{Name: "cursor", In: "query", Description: "The next cursor of the page before; none for the first page.", Schema: str("")},
	}
}

// accountQuery is the ?account= parameter of a list: a member's own
// account by default; an operator names any.
func accountQuery() Param {
	return Param{Name: "account", In: "query", Description: "The account (default: the caller's own; operators may name any).",
		Schema: integer("").with("minimum", 1), Example: "1"}
}

// idParam is the {id} path parameter of an object.
func idParam(what string) Param {
	return Param{Name: "id", In: "path", Required: true, Description: "The " + what + "'s id.", Schema: integer("").with("minimum", 1), Example: "1"}
}

// okAnswer is a management route's success answer.
func okAnswer(status int, desc, schema string, example any) Answer {
	return Answer{Status: status, Description: desc, Schema: schema, Headers: rateLimitHeaders(), Example: example}
}
