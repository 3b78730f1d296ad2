/** Privacy lists as the module handles them (XEP-0016 §2.1). */
import type { Jid } from '@service/plugin-api';

export type ItemType = 'jid' | 'group' | 'subscription';
export type Action = 'allow' | 'deny';
export type Subscription = 'none' | 'to' | 'from' | 'both';

/** The stanza kinds an item may name; a stanza of no such kind ('other') is matched by items naming none. */
export type StanzaKind = 'message' | 'iq' | 'presence-in' | 'presence-out';
export const STANZA_KINDS: readonly StanzaKind[] = ['message', 'iq', 'presence-in', 'presence-out'];

export interface PrivacyItem {
  /** Undefined: the fall-through item, matching everyone. */
  readonly type: ItemType | undefined;
  /** A normalized JID, a group name or a subscription state; undefined for a fall-through item. */
  readonly value: string | undefined;
  /** The JID of a 'jid' item, parsed once. */
  readonly jid?: Jid;
  readonly action: Action;
  readonly order: number;
  /** The kinds of stanza the item applies to; empty: every stanza, in and out. */
  readonly kinds: readonly StanzaKind[];
}

export interface PrivacyList {
  readonly name: string;
  /** In ascending order. */
  readonly items: readonly PrivacyItem[];
}

/** What an account has: its lists by name and the name of its default list. */
export interface AccountPrivacy {
  readonly lists: ReadonlyMap<string, PrivacyList>;
  readonly defaultName: string | undefined;
}
