/**
 * mod_push: push notifications (XEP-0357). A client enables push with an app server's JID and node (and
 * publish options); while that client's session is detached — stream management keeps it after its
 * connection was lost — or while the account has no session and its messages are stored offline, each
 * message it would miss is announced to the app server with a pubsub publish, which wakes the device;
 * so is, once, the loss of a connection that left messages unacknowledged. It learns of these from
 * mod_stream_mgmt's and mod_offline's hooks (sm_session_detached, offline_message_stored) and from the
 * user_receive chain (layers.ts).
 * Push sessions live in SQL (store.ts), read through a shared cache, so every worker and node notifies
 * the same ones. An app server that refuses a notification disables its push session (answers.ts).
 * What a notification reveals is the operator's choice (`include_sender`, `include_body`): nothing by default.
 */
import { Jid, defineModule } from '@service/plugin-api';
// The offline_message_stored and sm_session_detached hooks are declared in those modules' APIs; types
// only, no code of them: without them running, their hooks never run.
import type {} from '@service/mod_offline/api';
import type {} from '@service/mod_stream_mgmt/api';
import { PushAnswers } from './answers.js';
import { pushCommands, pushHandlers } from './commands.js';
import { PushRequests } from './enable-iq.js';
import { ANSWER_PRIORITY, DETACHED_PRIORITY, answersOnDeliver, answersOnReceive, detachedMessages } from './layers.js';
import { PUSH_MIGRATIONS } from './migrations.js';
import { Notifier } from './notifier.js';
import { NS_PUSH } from './ns.js';
import type { SummaryPolicy } from './notification.js';
import { PushStore } from './store.js';

export default defineModule({
  name: 'mod_push',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Push notifications (XEP-0357): messages for detached sessions and offline accounts wake the device through its app server',
  doc:
    "Clients enable push (`urn:xmpp:push:0`) with their app server's JID, a node and an optional publish-options form, and disable it for one node or all of an app server's; push sessions are stored in the SQL table `push_sessions`. " +
    'A chat, normal or groupchat message with a body (or an encrypted payload) that reaches a session detached by stream management notifies the push sessions that session enabled, and so does, once, a session that becomes detached with such a message unacknowledged; one stored offline (mod_offline) notifies all of the account\'s. ' +
    "A notification is a pubsub publish (XEP-0357 §5) from the account's bare JID to the app server, with a `urn:xmpp:push:summary` form that reveals the sender and the body only when `include_sender` and `include_body` say so. " +
    'An app server that answers with an error (other than `wait`) disables that push session; removing an account removes its push sessions; `delete_old_push_sessions` removes those not enabled again for a number of days.',
  options: {
    include_sender: {
      type: 'boolean',
      default: false,
      doc: "Whether notifications name the message's sender (the summary's `last-message-sender`).",
    },
    include_body: {
      type: 'custom',
      expected: 'true, false or a text',
      default: false,
      parse: (value: unknown): boolean | string => {
        if (typeof value === 'boolean' || typeof value === 'string') return value;
        throw new Error(`got ${JSON.stringify(value)}`);
      },
      doc: "Whether notifications carry the message's body (the summary's `last-message-body`): `true` the body itself, a text to send that text instead (ejabberd's \"New message\"), `false` nothing.",
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where push sessions are stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: PUSH_MIGRATIONS,
  commands: pushCommands,
  start(ctx) {
    // No reload(): a change of options (db_type included) restarts the module; push sessions stay stored.
    const policy: SummaryPolicy = { includeSender: ctx.options.include_sender, includeBody: ctx.options.include_body };
    const store = new PushStore(ctx.db, ctx.services.caches);
    const requests = new PushRequests(store, ctx.logger);
    const notifier = new Notifier(store, ctx.services.xmpp.router, ctx.logger, policy);
    const answers = new PushAnswers(store, ctx.logger);

    return {
      handlers: pushHandlers(store),
      stop: () => store.leave(),
      xmpp: {
        iq: [
          { type: 'set', ns: NS_PUSH, name: 'enable', to: 'account', handler: (c) => requests.enable(c) },
          { type: 'set', ns: NS_PUSH, name: 'disable', to: 'account', handler: (c) => requests.disable(c) },
        ],
        middleware: [
          { chain: 'deliver', priority: ANSWER_PRIORITY, handler: answersOnDeliver(answers) },
          { chain: 'user_receive', priority: ANSWER_PRIORITY, handler: answersOnReceive(answers) },
          { chain: 'user_receive', priority: DETACHED_PRIORITY, handler: detachedMessages(notifier, ctx.logger) },
        ],
        // XEP-0357 §4: the account's own disco#info says it supports push.
        disco: [{ scope: 'account', features: [NS_PUSH] }],
      },
      hooks: [
        {
          hook: 'offline_message_stored',
          handler: (message, _from, to) => {
            // Not awaited: the app server's round trip is no part of storing the message.
            void notifier.forOffline(message, to).catch((err: unknown) => ctx.logger.error({ err, account: to.bare }, 'a push notification failed'));
          },
        },
        {
          hook: 'sm_session_detached',
          handler: (session, unacknowledged) => {
            void notifier.forLostConnection(session, unacknowledged).catch((err: unknown) => ctx.logger.error({ err, jid: session.jid.full }, 'a push notification failed'));
          },
        },
        { hook: 'remove_user', handler: (user, host) => store.deleteAccount(new Jid(user, host, undefined)).then(() => undefined) },
      ],
    };
  },
});
