/**
 * mod_mam: message archive management (XEP-0313, urn:xmpp:mam:2). One-to-one messages with a body are
 * archived for both parties (sender and recipient accounts of this server), each archived copy named by a
 * XEP-0359 stanza-id given to the recipient; an account queries its archive with the XEP-0313 filters and
 * XEP-0059 paging, and sets what is archived with its preferences. Rooms with the option `mam` archive
 * through the mucArchiveService this module provides to mod_muc (muc-archive.ts). The purges are this
 * module's commands.
 */
import { accountKey, defineModule, provide } from '@service/plugin-api';
import { mucArchiveService } from '@service/mod_muc/api';
import { rosterService } from '@service/mod_roster/api';
import { Archiver } from './archiving.js';
import { mamCommands, mamHandlers } from './commands.js';
import { queryForm } from './form.js';
import { MAM_MIGRATIONS } from './migrations.js';
import { RoomArchive } from './muc-archive.js';
import { RoomArchiveStore } from './muc-store.js';
import { NS_MAM, NS_MAM_EXTENDED, NS_SID } from './ns.js';
import { getPrefs, setPrefs } from './prefs-iq.js';
import { PrefsStore, type DefaultMode } from './prefs-store.js';
import { answerQuery } from './query.js';
import { ArchiveStore } from './store.js';

/**
 * Inside blocking (10) and privacy (12), so that a refused message is never archived; on deliver before
 * carbons (60), so that the received carbon copies carry the stanza-id too.
 */
const DELIVER_PRIORITY = 55;
/** On user_send after carbons (60): the sent copies are the client's own message, without archive ids. */
const SEND_PRIORITY = 65;

export default defineModule({
  name: 'mod_mam',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Message archive management (XEP-0313): one-to-one messages archived per account, room archives, queried with paging',
  doc:
    'Archives one-to-one messages (chat and normal, with a body) between accounts for both parties, in SQL tables `mam_messages` and `mam_prefs`. ' +
    "Clients query their own archive (XEP-0313 forms, XEP-0059 paging, `urn:xmpp:mam:2#extended` ids) and set what is archived with `<prefs/>`; `default` applies to accounts that never did. " +
    'The recipient gets each archived message with a XEP-0359 `<stanza-id/>`. XEP-0334 `<no-store/>` and `<no-permanent-store/>` keep a message out. ' +
    "With mod_muc, rooms whose option `mam` is on archive their groupchat messages with a body (not subject changes) in the same table, each broadcast with a `<stanza-id by='room@service'/>`; " +
    "queries go to the room's JID, results come from the occupant JIDs, the senders' real JIDs are shown in non-anonymous rooms and to moderators, and the room's history is read from its archive. " +
    'Occupants may query; so may anyone in an open room, affiliated accounts in a password-protected one, members in a members-only one; never outcasts. A destroyed room loses its archive.',
  provides: [mucArchiveService],
  consumes: [{ ref: rosterService, optional: true }],
  options: {
    default: {
      type: 'enum',
      values: ['always', 'roster', 'never'],
      default: 'always',
      doc: "What an account that never set its preferences gets archived: 'always' every message, 'roster' messages with contacts in its roster, 'never' nothing.",
    },
    max_page: {
      type: 'integer',
      min: 1,
      default: 50,
      doc: 'The most messages one query returns; a larger RSM <max/> is capped to it (ejabberd pages by 50).',
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where the archive is stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: MAM_MIGRATIONS,
  commands: mamCommands,
  start(ctx) {
    const { router } = ctx.services.xmpp;
    const store = new ArchiveStore(ctx.db);
    const prefs = new PrefsStore(ctx.db, ctx.services.caches);
    const defaultMode = () => ctx.options.default as DefaultMode;
    const archiver = new Archiver({ store, prefs, accounts: ctx.services.accounts, sessions: ctx.services.xmpp.sessions, logger: ctx.logger, defaultMode, roster: () => ctx.find(rosterService) });
    const rooms = new RoomArchiveStore(ctx.db);
    const commands = mamHandlers(store, rooms, ctx.services, ctx.logger);
    const queryDeps = { store, router, maxPage: () => ctx.options.max_page };
    const features = [NS_MAM, NS_MAM_EXTENDED, NS_SID];

    const roomArchive = new RoomArchive({ store, rooms, router, logger: ctx.logger, maxPage: () => ctx.options.max_page });

    return {
      services: [provide(mucArchiveService, roomArchive)],
      handlers: commands.handlers,
      channels: commands.channels,
      // A running purge stops between two batches with its module; queued archive rows are written first.
      stop: async () => {
        commands.stop();
        prefs.leave();
        await store.flush();
      },
      xmpp: {
        iq: [
          { type: 'get', ns: NS_MAM, name: 'query', to: 'account', handler: () => queryForm() },
          { type: 'set', ns: NS_MAM, name: 'query', to: 'account', handler: (c) => answerQuery(c, queryDeps) },
          { type: 'get', ns: NS_MAM, name: 'prefs', to: 'account', handler: (c) => getPrefs(c, prefs, defaultMode()) },
          { type: 'set', ns: NS_MAM, name: 'prefs', to: 'account', handler: (c) => setPrefs(c, prefs) },
        ],
        middleware: [
          { chain: 'deliver', priority: DELIVER_PRIORITY, handler: (c, next) => archiver.onDeliver(c, next) },
          { chain: 'user_send', priority: SEND_PRIORITY, handler: (c, next) => archiver.onSend(c, next) },
        ],
        disco: [
          { scope: 'server', features },
          { scope: 'account', features },
        ],
      },
      hooks: [
        {
          hook: 'remove_user',
          handler: async (user, host) => {
            const account = accountKey(user, host);
            await store.deleteAccount(account);
            await prefs.delete(account);
          },
        },
      ],
    };
  },
});
