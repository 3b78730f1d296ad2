/**
 * mod_muc: multi-user chat (XEP-0045) with ejabberd's MUC/Sub. A conference service per virtual host
 * (conference.@HOST@ by default) whose rooms live in one MucRooms; persistent rooms are stored in SQL. Other
 * modules use the rooms through `mucService` (`@service/mod_muc/api`): mod_muc_admin's commands,
 * mod_admin_extra's send_message. Rooms with the option `mam` archive through `mucArchiveService` when a
 * module provides it (mod_mam), and run without archives when none does.
 */
import { discoItemsService } from '@service/mod_disco/api';
import { mucPortability } from './portability.js';
import { defineModule, provide, type AclSubject, type C2SSession, type Jid, type XmlElement } from '@service/plugin-api';
import type { MucEnv, MucSettings } from './context.js';
import { MUC_MIGRATIONS } from './migrations.js';
import { ROOM_OPTION_FIELDS } from './options-schema.js';
import { mucArchiveService, mucService } from './public-api.js';
import { BUILTIN_ROOM_DEFAULTS, withOptions } from './room-options.js';
import { API_CHANNEL, HOME_WORKER, RoomsAway, homeChannels, remoteMucApi } from './process-proxy.js';
import { ClusteredRooms, roomKey } from './cluster-rooms.js';
import { MucRooms } from './rooms.js';
import { isConferenceService } from './service.js';
import { MucStore } from './store.js';

export default defineModule({
  name: 'mod_muc',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  provides: [mucService],
  // The conference services are listed in the server's disco#items when mod_disco runs; rooms with `mam`
  // archive when mod_mam runs.
  consumes: [
    { ref: discoItemsService, optional: true },
    { ref: mucArchiveService, optional: true },
  ],
  summary: 'Multi-user chat (XEP-0045) with MUC/Sub: conference services, rooms, roles, affiliations, history',
  doc:
    'Runs a conference service for each virtual host (conference.@HOST@ by default): rooms created by joining ' +
    'them (locked until their owner configures them or accepts an instant room), roles and affiliations with ' +
    "XEP-0045's rules, room configuration, history, subjects, private messages, voice requests, invitations " +
    '(mediated and XEP-0249), nick registration, service discovery, and ejabberd\'s MUC/Sub subscriptions. ' +
    'Persistent rooms, affiliations, subscriptions, registered nicks and the history of persistent rooms are stored in SQL. ' +
    'Rooms with the option `mam` archive their messages (XEP-0313, queried at the room JID) and read their history from the archive when mod_mam runs.',
  options: {
    host: {
      type: 'string',
      default: 'conference.@HOST@',
      doc: 'The service domain; @HOST@ is replaced by each virtual host.',
    },
    hosts: {
      type: 'list',
      of: { type: 'string', nonEmpty: true, doc: 'A service domain (@HOST@ is replaced by each virtual host).' },
      default: [],
      doc: 'Several service domains instead of `host` (each with @HOST@ substituted).',
    },
    access_create: { type: 'string', default: 'all', doc: 'The access rule that says who may create rooms.' },
    access_admin: {
      type: 'string',
      default: 'none',
      doc: "The access rule of service administrators (owners of every room); the server's admin ACL is one too.",
    },
    access_persistent: { type: 'string', default: 'all', doc: 'The access rule that says who may make a room persistent.' },
    max_users: { type: 'integer', default: 200, min: 1, doc: 'The most occupants any room may have.' },
    max_rooms_discoitems: { type: 'integer', default: 100, min: 0, doc: 'The most rooms the service lists in disco#items.' },
    history_size: { type: 'integer', default: 20, min: 0, doc: 'How many messages each room keeps for newcomers.' },
    max_user_conferences: {
      type: 'integer',
      default: 100,
      min: 1,
      infinity: true,
      doc: "How many rooms one account may be an occupant of at once; 'infinity' for no limit.",
    },
    default_room_options: {
      type: 'object',
      fields: ROOM_OPTION_FIELDS,
      default: {},
      doc: `The options of new rooms, under ejabberd's names: ${Object.keys(ROOM_OPTION_FIELDS).join(', ')}. presence_broadcast is a list of roles; captcha_protected must stay false (no CAPTCHA here).`,
    },
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: 'Where rooms are stored; defaults to default_db.' },
  },
  migrations: MUC_MIGRATIONS,
  start(ctx) {
    const o = ctx.options;
    const given: Record<string, string | number | boolean | readonly string[]> = {};
    for (const [name, value] of Object.entries(o.default_room_options)) if (value !== undefined) given[name] = value;
    const defaults = withOptions({ ...BUILTIN_ROOM_DEFAULTS, max_users: Math.min(BUILTIN_ROOM_DEFAULTS.max_users, o.max_users) }, given);
    if (defaults.captcha_protected) throw new Error('mod_muc: default_room_options.captcha_protected cannot be true: this server has no CAPTCHA');
    const patterns = o.hosts.length ? o.hosts : [o.host];
    const serviceHost = new Map<string, string>();
    for (const host of ctx.hosts) for (const pattern of patterns) serviceHost.set(pattern.replaceAll('@HOST@', host).toLowerCase(), host);
    const settings: MucSettings = {
      services: [...serviceHost.keys()],
      hostOf: (service) => serviceHost.get(service) ?? ctx.hosts[0] ?? service,
      historySize: o.history_size,
      maxUsers: o.max_users,
      maxRoomsDiscoItems: o.max_rooms_discoitems,
      maxUserConferences: o.max_user_conferences,
      defaultRoomOptions: defaults,
    };
    const subject = (bare: string): AclSubject => {
      const at = bare.indexOf('@');
      return at === -1 ? { server: bare } : { user: bare.slice(0, at), server: bare.slice(at + 1) };
    };
    const access = () => ctx.services.access();
    const router = ctx.services.xmpp.router;
    const env: MucEnv = {
      settings,
      store: new MucStore(ctx.db),
      logger: ctx.logger,
      send: (stanza: XmlElement) => router.route(stanza),
      sendEach: (stanza: XmlElement, recipients: readonly string[]) => router.routeEach(stanza, recipients),
      bounce: (stanza, error) => router.bounce(stanza, error),
      isServiceAdmin: (bare) => access().matchRule(o.access_admin, subject(bare)) === 'allow' || access().matchAcl('admin', subject(bare)),
      mayCreate: (bare) => access().matchRule(o.access_create, subject(bare)) === 'allow',
      mayMakePersistent: (bare) => access().matchRule(o.access_persistent, subject(bare)) === 'allow',
      archive: () => ctx.find(mucArchiveService),
      now: () => Date.now(),
    };
    const unlist = ctx.find(discoItemsService)?.addServerItems((host) =>
      settings.services.filter((service) => settings.hostOf(service) === host).map((jid) => ({ jid, name: 'Chatrooms' })),
    );
    const { processes } = ctx.services;
    // `carriedHere`: whether this process carried the session (a cluster's node tells other nodes only then
    // where it joined rooms, see cluster-rooms.ts).
    const hooks = (rooms: { sessionClosed(full: Jid, carriedHere: boolean): Promise<void>; accountRemoved(bare: string): Promise<void> }) => [
      { hook: 'c2s_session_closed' as const, handler: (session: C2SSession) => rooms.sessionClosed(session.jid, ctx.services.xmpp.isLocal(session)) },
      { hook: 'remove_user' as const, handler: (user: string, host: string) => rooms.accountRemoved(`${user}@${host}`) },
    ];
    if (processes.self !== HOME_WORKER) {
      // Another worker than the rooms' (see process-proxy.ts): it hands everything to the home.
      const away = new RoomsAway(processes, (stanza, error) => router.bounce(stanza, error));
      const local = { services: () => [...settings.services], isService: (service: string) => isConferenceService(settings.services, service) };
      return {
        services: [provide(mucService, remoteMucApi((call) => processes.call(HOME_WORKER, API_CHANNEL, call), local))],
        xmpp: { domains: settings.services.map((domain) => ({ domain, handler: (stanza) => away.handleStanza(stanza) })) },
        hooks: hooks(away),
        stop: () => unlist?.(),
      };
    }
    // Alone, the rooms are this process's; in a cluster each lives on the node that owns it (cluster-rooms.ts).
    const { nodes } = ctx.services;
    const rooms = new MucRooms(env, {
      holds: async (bare) => !nodes.clustered() || (await nodes.owner(roomKey(bare))) === nodes.self,
      released: (bare) => void nodes.release(roomKey(bare)).catch(() => undefined),
    });
    const clustered = new ClusteredRooms(rooms, nodes, env.send, env.bounce);
    return {
      services: [provide(mucService, clustered)],
      hostPortability: [mucPortability(env.store, settings)],
      xmpp: {
        domains: settings.services.map((domain) => ({ domain, handler: (stanza, from, to) => clustered.handleStanza(stanza, from, to) })),
      },
      hooks: [...hooks(clustered), { hook: 'cluster_node_down', handler: (node: string) => clustered.nodeDown(node) }],
      // The other workers (process-proxy.ts) and the other nodes of a cluster reach the rooms through these.
      channels: homeChannels(rooms, (stanza, from, to, hops) => clustered.handleStanza(stanza, from, to, hops)),
      stop: async () => {
        unlist?.();
        await rooms.shutdown();
      },
    };
  },
});
