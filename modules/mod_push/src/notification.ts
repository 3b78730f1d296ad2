/**
 * What a notification says and how it is addressed (XEP-0357 §5): a pubsub publish to the app server's
 * node, with one item holding <notification/> and its summary form, and the push session's publish
 * options. It comes from the account's bare JID, as the XEP's examples do: the app server's answer then
 * reaches the account's deliver chain, where answers.ts reads it. Its id carries the node's hash, so that
 * the answer names the push session it is about on any worker or node, without a table of requests.
 *
 * The summary reveals what the module's options allow and nothing else: the FORM_TYPE always; the sender
 * (`include_sender`) and the body, or a fixed text instead of it (`include_body`), only when configured.
 */
import { randomBytes } from 'node:crypto';
import { x, type Jid, type XmlElement } from '@service/plugin-api';
import { NS_DATA, NS_PUBSUB, NS_PUSH, NS_PUSH_SUMMARY } from './ns.js';
import type { PushSession } from './store.js';

/** What the summary may reveal: ejabberd's `include_sender` and `include_body` (true, false or a fixed text). */
export interface SummaryPolicy {
  readonly includeSender: boolean;
  readonly includeBody: boolean | string;
}

/** What one message tells the summary (incoming.ts). */
export interface MessageFacts {
  /** The sender's JID as the message gives it. */
  readonly sender: string;
  /** The body, '(encrypted)' for an end-to-end encrypted payload without one. */
  readonly body: string;
}

const ID_PATTERN = /^push-([0-9a-f]{64})-[0-9a-f]{16}$/;

/** The id of a notification about the push session whose node hashes to `hash`. */
export function notificationId(hash: string): string {
  return `push-${hash}-${randomBytes(8).toString('hex')}`;
}

/** The node hash an answer's id carries back, or undefined when the id is not one of ours. */
export function hashOfAnswerId(id: string | undefined): string | undefined {
  return id === undefined ? undefined : ID_PATTERN.exec(id)?.[1];
}

export function notificationIq(account: Jid, push: PushSession, facts: MessageFacts, policy: SummaryPolicy): XmlElement {
  return x(
    'iq',
    { type: 'set', from: account.bare, to: push.service, id: notificationId(push.nodeHash) },
    x(
      'pubsub',
      { xmlns: NS_PUBSUB },
      x('publish', { node: push.node }, x('item', {}, x('notification', { xmlns: NS_PUSH }, summary(facts, policy)))),
      push.publishOptions ? x('publish-options', {}, push.publishOptions.clone()) : undefined,
    ),
  );
}

function summary(facts: MessageFacts, policy: SummaryPolicy): XmlElement {
  const body = policy.includeBody === true ? facts.body : policy.includeBody === false ? undefined : policy.includeBody;
  return x(
    'x',
    { xmlns: NS_DATA, type: 'submit' },
    field('FORM_TYPE', NS_PUSH_SUMMARY, 'hidden'),
    policy.includeSender ? field('last-message-sender', facts.sender) : undefined,
    body !== undefined ? field('last-message-body', body) : undefined,
  );
}

function field(name: string, value: string, type?: string): XmlElement {
  return x('field', { var: name, type }, x('value', {}, value));
}
