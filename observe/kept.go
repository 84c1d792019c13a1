package observe

import "time"

// Actions of channels nobody watches are numbered but not kept.
//
// Every action takes the next serverSeq, so that numbering never depends
// on who watches. But an action of a session or chat channel that has no
// subscriber, and had none for keepAfterUnsubscribe, is neither kept in
// the ring nor in the replay index, and nothing is allocated for it: with
// no observer the hub only updates the session's state, which snapshots
// are made of. The session remembers the serverSeq of the last action it
// did not keep for each of its two channels; a reconnect whose lastSeen is
// older gets snapshots (the answer the Host Protocol gives when missed
// actions cannot be replayed), never a replay with a hole.
//
// An observer that drops its connection has the channels it watched kept
// for keepAfterUnsubscribe after it left, so that it can reconnect and
// replay what it missed. With Options.SharedSeq every action is kept: an
// observer may come from another replica, where it watched.

// keepAfterUnsubscribe is how long a channel's actions are still kept
// after its last subscriber left.
const keepAfterUnsubscribe = 10 * time.Minute

// unwatchedLocked records that ch has lost its last subscriber; h.mu must
// be held.
func (h *Hub) unwatchedLocked(ch string) {
	if ch == RootChannel {
		return
	}
	h.lastWatched[ch] = h.o.Now()
}

// dropSubscriberLocked removes o from ch's subscribers; h.mu must be held.
func (h *Hub) dropSubscriberLocked(o *observer, ch string) {
	m := h.subs[ch]
	if m == nil {
		return
	}
	delete(m, o)
	if len(m) == 0 {
		delete(h.subs, ch)
		h.unwatchedLocked(ch)
	}
}

// keptLocked reports whether the actions of ch are kept for replay; h.mu
// must be held.
func (h *Hub) keptLocked(ch string) bool {
	if h.o.SharedSeq || len(h.subs[ch]) > 0 {
		return true
	}
	t, ok := h.lastWatched[ch]
	if !ok {
		return false
	}
	if h.o.Now().Sub(t) < keepAfterUnsubscribe {
		return true
	}
	delete(h.lastWatched, ch)
	return false
}

// sweepWatchedLocked forgets the channels left longer ago than
// keepAfterUnsubscribe; h.mu must be held.
func (h *Hub) sweepWatchedLocked() {
	now := h.o.Now()
	for ch, t := range h.lastWatched {
		if now.Sub(t) >= keepAfterUnsubscribe {
			delete(h.lastWatched, ch)
		}
	}
}

// unkeptAfter reports whether s has an action of ch after seq that was
// not kept (so that it cannot be replayed).
func (s *session) unkeptAfter(ch string, seq uint64) bool {
	if ch == s.chatURI {
		return s.unkeptChat > seq
	}
	return s.unkeptSession > seq
}
