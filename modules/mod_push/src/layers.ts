/**
 * Where mod_push meets the router's chains:
 *
 *   - deliver, outermost (5, before blocking at 10 and privacy at 12): an app server's answer to a
 *     notification, addressed to the account's bare JID, is taken here (answers.ts) and goes no further;
 *   - user_receive, outermost (5): the same answer when the server itself made it (an app server that is
 *     not connected: routing answers for it, straight to the account's sessions), which no client asked for;
 *   - user_receive, just outside stream management (990, which is at 1000 and queues what a detached session
 *     gets): a message that reached a detached session — every layer before let it through — wakes the
 *     device that enabled push from that session.
 */
import { Jid, type DeliverContext, type Logger, type Middleware, type ReceiveContext } from '@service/plugin-api';
import type { PushAnswers } from './answers.js';
import type { Notifier } from './notifier.js';

export const ANSWER_PRIORITY = 5;
export const DETACHED_PRIORITY = 990;

export function answersOnDeliver(answers: PushAnswers): Middleware<DeliverContext> {
  return async (ctx, next) => {
    const hash = ctx.to.isBare ? answers.hashOf(ctx.stanza) : undefined;
    if (hash === undefined) return next();
    await answers.handle(ctx.stanza, hash, ctx.to, ctx.from);
  };
}

export function answersOnReceive(answers: PushAnswers): Middleware<ReceiveContext> {
  return async (ctx, next) => {
    const hash = answers.hashOf(ctx.stanza);
    const toAccount = hash !== undefined && Jid.tryParse(ctx.stanza.attr('to'))?.full === ctx.session.account.bare;
    const appServer = toAccount ? Jid.tryParse(ctx.stanza.attr('from')) : undefined;
    if (hash === undefined || appServer === undefined) return next();
    await answers.handle(ctx.stanza, hash, ctx.session.account, appServer);
  };
}

export function detachedMessages(notifier: Notifier, logger: Logger): Middleware<ReceiveContext> {
  return async (ctx, next) => {
    await next();
    const session = ctx.session;
    if (ctx.stanza.name !== 'message' || session.outlet !== undefined || session.closed) return;
    // Not awaited: the app server's round trip is no part of delivering the message.
    void notifier.forDetached(session, ctx.stanza).catch((err: unknown) => logger.error({ err, jid: session.jid.full }, 'a push notification failed'));
  };
}
