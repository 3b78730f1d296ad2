/**
 * The layer of the `offline` chain: keeps what storage-policy.ts says to keep, up to max_user_messages per
 * account. A full queue answers <service-unavailable/>, the condition XEP-0160 names for it. A message it
 * stored is announced with the `offline_message_stored` hook (public-api.ts).
 */
import { StanzaError, x, type HooksApi, type Logger, type Middleware, type OfflineContext, type RouterApi } from '@service/plugin-api';
import type { KeyedLock } from '@service/plugin-api';
import type { OfflineDelivery } from './delivery.js';
import { NS_AMP_ERRORS } from './expiry.js';
import { decide } from './storage-policy.js';
import type { OfflineStore } from './store.js';

export interface OfflineLayerDeps {
  readonly store: OfflineStore;
  readonly delivery: OfflineDelivery;
  readonly locks: KeyedLock;
  readonly router: RouterApi;
  readonly hooks: HooksApi;
  readonly logger: Logger;
  /** Messages kept for an account (unexpired); Infinity for no limit. Asked at each message: a reload applies. */
  readonly maxUserMessages: (account: { user: string; host: string }) => number;
}

export function offlineLayer(deps: OfflineLayerDeps): Middleware<OfflineContext> {
  const { store, delivery, locks, router, hooks, logger, maxUserMessages } = deps;
  return async (ctx, next) => {
    const now = Date.now();
    const decision = decide(ctx.stanza, now);
    switch (decision.action) {
      case 'pass':
        return next();
      case 'drop':
        logger.debug({ to: ctx.to.bare, from: ctx.from.full, reason: decision.reason }, 'offline message dropped');
        return;
      case 'expired-error': {
        // XEP-0079 §8: an 'error' action answers <undefined-condition/> with the rule that triggered.
        const rule = decision.rule;
        const failed = x('failed-rules', { xmlns: NS_AMP_ERRORS }, x('rule', { action: rule.attr('action'), condition: rule.attr('condition'), value: rule.attr('value') }));
        return router.bounce(ctx.stanza, new StanzaError('undefined-condition', 'the message expired before it could be delivered', 'modify', failed));
      }
      case 'store':
        break;
    }
    const account = { user: ctx.to.user!, host: ctx.to.host };
    let outcome: 'stored' | 'full' | 'failed';
    const limit = maxUserMessages(account);
    try {
      outcome = await locks.run(ctx.to.bare, async () => {
        if (limit !== Infinity && (await store.count(account, now)) >= limit) return 'full';
        await store.add(account, { from: ctx.from.full, stanza: ctx.stanza, createdAt: now, expiresAt: decision.expiresAt });
        return 'stored';
      });
    } catch (err) {
      // A storage failure is the sender's answer, not the end of its stream.
      logger.error({ err, to: ctx.to.bare }, 'an offline message could not be stored');
      outcome = 'failed';
    }
    if (outcome === 'full') {
      return router.bounce(ctx.stanza, new StanzaError('service-unavailable', `the recipient's offline message queue is full (${limit} messages)`));
    }
    if (outcome === 'failed') return router.bounce(ctx.stanza, new StanzaError('service-unavailable', 'the message could not be stored for the offline recipient'));
    try {
      await hooks.run('offline_message_stored', ctx.stanza, ctx.from, ctx.to);
    } catch (err) {
      // The message is stored: what another module does about it must not cost the sender an answer.
      logger.error({ err, to: ctx.to.bare }, 'an offline_message_stored handler failed');
    }
    try {
      await delivery.deliverIfOnline(account);
    } catch (err) {
      logger.error({ err, to: ctx.to.bare }, 'offline messages could not be delivered');
    }
  };
}
