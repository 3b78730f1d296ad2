/**
 * The subscription state machine of RFC 6121 Appendix A, as pure functions: what a subscription stanza
 * does to a contact's state in the roster of the account that sends it (outbound, A.2) or receives it
 * (inbound, A.3), and whether the stanza goes on.
 */
import type { Pending, Subscription, SubscriptionState } from './types.js';

export type SubscriptionType = 'subscribe' | 'subscribed' | 'unsubscribe' | 'unsubscribed';

export const SUBSCRIPTION_TYPES: ReadonlySet<string> = new Set<SubscriptionType>(['subscribe', 'subscribed', 'unsubscribe', 'unsubscribed']);

/** The state as flags: easier to reason about than the nine named states. */
export interface Flags {
  /** The owner receives the contact's presence. */
  readonly to: boolean;
  /** The contact receives the owner's presence. */
  readonly from: boolean;
  readonly pendingOut: boolean;
  readonly pendingIn: boolean;
  /** Pre-approved (RFC 6121 §3.4): the next request from the contact is approved at once. */
  readonly approved: boolean;
}

export const NO_SUBSCRIPTION: Flags = { to: false, from: false, pendingOut: false, pendingIn: false, approved: false };

export interface OutboundOutcome {
  readonly next: Flags;
  /** Whether the stanza is routed to the contact. */
  readonly route: boolean;
}

/** RFC 6121 A.2: the owner sends a subscription stanza to the contact. */
export function outbound(type: SubscriptionType, state: Flags): OutboundOutcome {
  switch (type) {
    case 'subscribe':
      // Routed even when nothing changes: the contact's server answers a request it already granted with
      // 'subscribed' (§3.1.3), which repairs a state the two servers disagree on.
      return { next: state.to ? state : { ...state, pendingOut: true }, route: true };
    case 'unsubscribe':
      return { next: { ...state, to: false, pendingOut: false }, route: true };
    case 'subscribed':
      if (state.from) return { next: state, route: false };
      if (state.pendingIn) return { next: { ...state, from: true, pendingIn: false, approved: false }, route: true };
      // Nothing to approve yet: a pre-approval, kept here and not sent (§3.4).
      return { next: { ...state, approved: true }, route: false };
    case 'unsubscribed':
      // Also routed without a change: the contact's server drops what does not apply to its state.
      return { next: { ...state, from: false, pendingIn: false, approved: false }, route: true };
  }
}

export interface InboundOutcome {
  readonly next: Flags;
  /** Whether the stanza is delivered to the owner's clients (A.3: only when the state changed). */
  readonly deliver: boolean;
  /** The server answers 'subscribed' on the owner's behalf (already subscribed, or pre-approved). */
  readonly autoApprove: boolean;
}

/** RFC 6121 A.3: the owner receives a subscription stanza from the contact. */
export function inbound(type: SubscriptionType, state: Flags): InboundOutcome {
  const unchanged = { next: state, deliver: false, autoApprove: false };
  switch (type) {
    case 'subscribe':
      if (state.from) return { ...unchanged, autoApprove: true };
      if (state.approved) return { next: { ...state, from: true, pendingIn: false, approved: false }, deliver: false, autoApprove: true };
      if (state.pendingIn) return unchanged;
      return { next: { ...state, pendingIn: true }, deliver: true, autoApprove: false };
    case 'unsubscribe':
      if (!state.from && !state.pendingIn) return unchanged;
      return { next: { ...state, from: false, pendingIn: false }, deliver: true, autoApprove: false };
    case 'subscribed':
      if (!state.pendingOut) return unchanged;
      return { next: { ...state, to: true, pendingOut: false }, deliver: true, autoApprove: false };
    case 'unsubscribed':
      if (!state.to && !state.pendingOut) return unchanged;
      return { next: { ...state, to: false, pendingOut: false }, deliver: true, autoApprove: false };
  }
}

export function subscriptionOf(flags: Pick<Flags, 'to' | 'from'>): Subscription {
  if (flags.to && flags.from) return 'both';
  if (flags.to) return 'to';
  if (flags.from) return 'from';
  return 'none';
}

export function flagsOf(subscription: Subscription): Pick<Flags, 'to' | 'from'> {
  return { to: subscription === 'to' || subscription === 'both', from: subscription === 'from' || subscription === 'both' };
}

/** See `Pending`: with both requests open, the one waiting for the owner ('in') is reported. */
export function pendingOf(flags: Pick<Flags, 'pendingIn' | 'pendingOut'>): Pending {
  if (flags.pendingIn) return 'in';
  if (flags.pendingOut) return 'out';
  return 'none';
}

export function publicState(flags: Flags): SubscriptionState {
  return { subscription: subscriptionOf(flags), pendingOut: flags.pendingOut, pendingIn: flags.pendingIn };
}

export function sameFlags(a: Flags, b: Flags): boolean {
  return a.to === b.to && a.from === b.from && a.pendingOut === b.pendingOut && a.pendingIn === b.pendingIn && a.approved === b.approved;
}
