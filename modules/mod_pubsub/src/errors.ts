/**
 * The stanza errors of publish-subscribe (XEP-0060 §7, §8): a general condition with, where the XEP names
 * one, a pubsub-specific condition (`<precondition-not-met xmlns='…#errors'/>`…) that clients test for.
 */
import { StanzaError, STANZA_CONDITIONS, x, type StanzaCondition } from '@service/plugin-api';
import { NS_PUBSUB_ERRORS } from './ns.js';

/** The pubsub#errors conditions this module answers with. */
export type PubsubCondition =
  | 'closed-node'
  | 'invalid-jid'
  | 'invalid-options'
  | 'item-forbidden'
  | 'item-required'
  | 'max-items-exceeded'
  | 'nodeid-required'
  | 'not-in-roster-group'
  | 'not-subscribed'
  | 'payload-required'
  | 'precondition-not-met'
  | 'presence-subscription-required'
  | 'unsupported'
  | 'invalid-payload'
  | 'too-many-subscriptions';

export function pubsubError(condition: StanzaCondition, specific: PubsubCondition, text?: string, feature?: string): StanzaError {
  const app = x(specific, { xmlns: NS_PUBSUB_ERRORS, feature });
  return new StanzaError(condition, text, STANZA_CONDITIONS[condition], app);
}
