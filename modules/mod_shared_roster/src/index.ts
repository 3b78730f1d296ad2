/**
 * mod_shared_roster: shared roster groups. Members of a group appear in the rosters of the members of the
 * groups that display it, as XMPP clients see them, through mod_roster's service (shared contacts).
 * Managed with mod_admin_extra's srg_* commands, through the shared roster service (`sharedRosterService`
 * of `@service/mod_shared_roster/api`).
 */
import { KeyedLock, defineModule, provide } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { accountHooks } from './account-hooks.js';
import { sharedRosterApi } from './api.js';
import { Groups } from './groups.js';
import { HostAccounts, OnlineAccounts, SHARED_ROSTER_CACHE } from './members.js';
import { SHARED_ROSTER_MIGRATIONS } from './migrations.js';
import { ONLINE_TRACKING_PRIORITY, onlineTracking } from './online-tracking.js';
import { Propagation } from './propagation.js';
import { sharedRosterService } from './public-api.js';
import { SharedRosterStore } from './store.js';
import { SharedView } from './view.js';

export default defineModule({
  name: 'mod_shared_roster',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Shared roster groups: group members see each other in their rosters, subscribed both ways',
  doc:
    'A shared roster group has an identifier on a virtual host, a label, a description, members, and a list of ' +
    'displayed groups. Every member of a group sees the members of the groups it displays in its roster, ' +
    'subscribed both ways and in a roster group named after the displayed group\'s label (its identifier when the ' +
    'label is empty): presence flows between them as between subscribed contacts, without any subscription ' +
    'handshake. A group usually displays itself, so that its members see each other.\n\n' +
    'Members are accounts of any served virtual host, or two special members: `@all@` (every account of the ' +
    'group\'s host, present and future) and `@online@` (every account of the group\'s host that has an available ' +
    'session). Every account of the host counts as a member of such a group for what the group displays. A ' +
    'displayed group on another virtual host is written `group@vhost`.\n\n' +
    'Clients online when groups change get roster pushes at once; roster versions (XEP-0237) change with the ' +
    'groups, so clients that cached a roster get the new one at their next login. A shared contact cannot be ' +
    'removed from a roster (<not-allowed/>) while its group shows it; the owner may still name it or add it to ' +
    'groups of its own, and subscription stanzas between shared contacts change nothing. Groups are managed with ' +
    "mod_admin_extra's srg_* commands. An account's memberships are removed with the account.",
  provides: [sharedRosterService],
  consumes: [rosterService],
  options: {
    db_type: { type: 'enum', values: ['sql', 'mnesia'], doc: "Where groups are stored: 'sql' or 'mnesia' (the embedded store); defaults to default_db." },
  },
  migrations: SHARED_ROSTER_MIGRATIONS,
  async start(ctx) {
    // No reload(): the only option, db_type, means other tables, so a change restarts the module.
    // Required, so it runs; a restart of mod_roster restarts this module, which then provides its contacts again.
    const roster = ctx.use(rosterService);
    const xmpp = ctx.services.xmpp;
    const store = new SharedRosterStore(ctx.db);
    const groups = new Groups();
    for (const group of await store.load()) groups.put(group);
    const accounts = new HostAccounts(ctx.services.accounts);
    const online = new OnlineAccounts(xmpp);
    await online.fillFromSessions();
    const view = new SharedView(groups, accounts, online);
    const propagation = new Propagation(roster, xmpp, view, ctx.logger);
    const lock = new KeyedLock();
    const exclusive = <T>(work: () => Promise<T>) => lock.run('groups', work);
    const reload = () =>
      exclusive(() =>
        propagation.around(
          async () => {
            const loaded = await store.load();
            groups.clear();
            for (const group of loaded) groups.put(group);
          },
          { presence: true },
        ),
      );
    // What another node of a cluster changed: read the groups and accounts again, quietly (that node has
    // pushed the change to every roster concerned, on every node).
    const leaveSharedCache = ctx.services.caches.register(SHARED_ROSTER_CACHE, (host) => {
      if (host !== undefined) return accounts.forget(host);
      accounts.clear();
      void exclusive(async () => {
        const loaded = await store.load();
        groups.clear();
        for (const group of loaded) groups.put(group);
      }).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'reading the shared roster groups again failed: %s', err.message));
    });
    const tracking = onlineTracking({ groups, online, propagation, exclusive });
    const stopProviding = roster.provideSharedContacts(view);
    return {
      services: [provide(sharedRosterService, sharedRosterApi({ services: ctx.services, groups, store, propagation, exclusive }))],
      xmpp: { middleware: [{ chain: 'user_send', priority: ONLINE_TRACKING_PRIORITY, handler: tracking.middleware }] },
      hooks: [
        ...accountHooks({ groups, store, accounts, online, propagation, exclusive, reload, caches: ctx.services.caches }),
        { hook: 'c2s_session_closed', handler: tracking.sessionClosed },
      ],
      stop() {
        stopProviding();
        leaveSharedCache();
      },
    };
  },
});
