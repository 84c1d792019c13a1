// Package notify tells people outside the dashboard that an agent waits for
// an approval, and how the approval ended, by posting to webhooks: a
// generic JSON body (Message, schema "ahp.approval-notification" version 1)
// or a Slack incoming-webhook body. A Notifier is a harness.Notifier: it
// queues each notice at once and delivers it in the background with
// retries, so a slow or dead receiver never delays a decision; what does
// not fit its bounded queues is dropped and counted. docs/notifications.md
// shows how to configure it.
package notify
