/**
 * mod_antispam: refuses spam before it is delivered, archived or stored offline, like ejabberd 25.07's module
 * of that name. Per virtual host it keeps a filter — spam JIDs, domains and URLs read from files, domains
 * blocked by command or by real-time block lists (pubsub nodes it subscribes to from `<host>/rtbl`),
 * whitelisted domains, and the spam filter cache of senders caught — and a `deliver` layer that refuses
 * what the filter condemns, except from contacts in the recipient's roster. Its eight commands act on one
 * host or on all (`global`). Every change (a sender cached, a command, an RTBL event) is carried to the other
 * workers and cluster nodes, so that they all refuse the same senders.
 *
 * It runs for the whole server (the plugin API lets only such modules declare commands) and filters on
 * every virtual host, each with its own lists (`@HOST@` in the file options) and cache.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { defineModule, type Jid, type XmlElement } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { antispamCommands } from './commands.js';
import { SpamDump } from './dump.js';
import { DELIVER_PRIORITY, spamLayer } from './enforcement.js';
import { HostFilter } from './filter.js';
import { antispamHandlers } from './handlers.js';
import { ListFileError, readLists, type ListFiles, type SpamLists } from './lists.js';
import { antispamOptions, parseFile, parseRtblServices } from './options.js';
import { RTBL_RESOURCE, RtblClient, serviceKey, type RtblUpdate } from './rtbl.js';
import { Propagation, type Change, type Snapshot } from './sync.js';

export default defineModule({
  name: 'mod_antispam',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Refuses spam by sender JID, domain, URLs in the body and real-time block lists, per host, cluster-wide',
  doc:
    'Filters the messages and subscription requests that arrive for local accounts: from a listed JID or domain (files, ' +
    'add_blocked_domain, real-time block lists such as xmppbl.org), or with a listed URL or JID in the body, they are ' +
    'refused with <policy-violation/> before delivery, archiving or offline storage, and the sender enters the spam ' +
    'filter cache, whose next stanzas are refused at once. Contacts in the recipient\'s roster and whitelisted domains ' +
    'always pass. See docs/antispam.md.',
  consumes: [{ ref: rosterService, optional: true }],
  options: antispamOptions,
  commands: antispamCommands,
  async start(ctx) {
    let options = ctx.options;
    const { xmpp, processes, nodes } = ctx.services;
    const dataDir = ctx.services.config().dataDir;
    const pathOf = (file: string, host: string) => {
      const expanded = file.replaceAll('@HOST@', host);
      return isAbsolute(expanded) ? expanded : resolve(dataDir, expanded);
    };
    const fileOf = (value: string | undefined, host: string) => {
      const file = parseFile(value);
      return file === undefined ? undefined : pathOf(file, host);
    };
    const filesOf = (host: string): ListFiles => ({
      jids: fileOf(options.spam_jids_file, host),
      domains: fileOf(options.spam_domains_file, host),
      urls: fileOf(options.spam_urls_file, host),
      whitelist: fileOf(options.whitelist_domains_file, host),
    });

    const filters = new Map<string, HostFilter>();
    for (const host of ctx.hosts) filters.set(host, new HostFilter(host, options.cache_size));
    // The lists must be readable at start: a bad file stops the module with its file and line, as in ejabberd.
    for (const [host, filter] of filters) {
      try {
        filter.setLists(await readLists(filesOf(host)));
      } catch (err) {
        if (err instanceof ListFileError) throw new Error(`spam filter lists of ${host}: ${err.message}`);
        throw err;
      }
    }

    const dumps = new Map<string, SpamDump>();
    const openDumps = () => {
      dumps.clear();
      if (options.spam_dump_file === false) return;
      for (const host of filters.keys()) {
        const file = options.spam_dump_file === true ? join(dataDir, `spam_dump_${host}.log`) : pathOf(options.spam_dump_file, host);
        dumps.set(host, new SpamDump(file, ctx.logger));
      }
    };
    openDumps();

    const propagation = new Propagation(processes, nodes, ctx.logger);
    /** Lists read for a reload: all hosts' or none. */
    const readFor = async (hosts: readonly string[]): Promise<Map<string, SpamLists>> => {
      const read = new Map<string, SpamLists>();
      for (const host of hosts) read.set(host, await readLists(filesOf(host)));
      return read;
    };
    const apply = async (change: Change): Promise<void> => {
      const filter = filters.get(change.host);
      if (!filter) return;
      switch (change.op) {
        case 'cache_add':
          filter.cache.add(change.jid, change.timestamp);
          return;
        case 'cache_drop':
          filter.cache.drop(change.jid);
          return;
        case 'cache_expire':
          filter.cache.expire(change.seconds, change.now);
          return;
        case 'domain_add':
          filter.addDomain(change.domain);
          return;
        case 'domain_remove':
          filter.removeDomain(change.domain);
          return;
        case 'rtbl':
          filter.updateRtbl(change.service, change);
          return;
        case 'reload':
          try {
            filter.setLists((await readFor([change.host])).get(change.host)!);
          } catch (err) {
            ctx.logger.error({ host: change.host, err: (err as Error).message }, 'spam filter lists of %s not reloaded here: %s', change.host, (err as Error).message);
          }
          return;
      }
    };
    const snapshot = (): Snapshot =>
      Object.fromEntries([...filters].map(([host, filter]) => [host, { cache: filter.cacheEntries(), added: filter.addedDomains() }]));

    // A worker or node that starts while others run takes over their cache and blocked domains.
    const state = await propagation.fetchState();
    if (state && typeof state === 'object') {
      for (const [host, held] of Object.entries(state)) {
        const filter = filters.get(host);
        if (!filter || !held || !Array.isArray(held.cache) || !Array.isArray(held.added)) continue;
        for (const entry of held.cache) if (typeof entry?.jid === 'string' && typeof entry.timestamp === 'number') filter.cache.add(entry.jid, entry.timestamp);
        for (const domain of held.added) if (typeof domain === 'string') filter.addDomain(domain);
      }
    }

    // Alone, this process's subscriptions are the server's: end them when they are given up. With other
    // workers or nodes, they still follow the lists.
    const alone = () => processes.count === 1 && !nodes.clustered();
    const rtbl = new Map<string, RtblClient>();
    const followRtbl = () => {
      const services = parseRtblServices(options.rtbl_services);
      if (!services.length) return;
      for (const host of filters.keys()) {
        const update = async (service: string, change: RtblUpdate) => {
          const lower = (ids?: string[]) => ids?.map((id) => id.toLowerCase());
          const normalized = { replace: lower(change.replace), add: lower(change.add), remove: lower(change.remove) };
          filters.get(host)?.updateRtbl(service, normalized);
          await propagation.send({ op: 'rtbl', host, service, ...normalized });
        };
        const client = new RtblClient(host, services, xmpp.router, update, ctx.logger);
        rtbl.set(host, client);
        client.start();
      }
    };
    /** The clients stay registered until stopped: the answers to their unsubscriptions must reach them. */
    const stopRtbl = async (unsubscribe: boolean) => {
      await Promise.all([...rtbl.values()].map((client) => client.stop(unsubscribe)));
      rtbl.clear();
    };

    const layer = spamLayer({
      filterOf: (host) => filters.get(host),
      accessRule: () => options.access_spam,
      access: () => ctx.services.access(),
      roster: () => ctx.find(rosterService),
      router: xmpp.router,
      logger: ctx.logger,
      refused: async ({ host, from, to, reason, cachedNow, time }) => {
        dumps.get(host)?.record(time, from.full, to.full, reason);
        if (cachedNow) await propagation.send({ op: 'cache_add', host, jid: from.bare, timestamp: Math.floor(time.getTime() / 1000) });
      },
    });

    const handlers = antispamHandlers({ filters, apply, send: (change) => propagation.send(change), readFor, logger: ctx.logger });

    followRtbl();
    return {
      handlers,
      channels: propagation.channels(apply, snapshot),
      xmpp: {
        middleware: [{ chain: 'deliver', priority: DELIVER_PRIORITY, handler: layer }],
        // Each host's RTBL subscriber, `<host>/rtbl`, registered whether or not lists are followed, so that a
        // reload may start following some.
        domains: [...filters.keys()].map((host) => ({
          domain: `${host}/${RTBL_RESOURCE}`,
          handler: (stanza: XmlElement, from: Jid) => rtbl.get(host)?.handle(stanza, from),
        })),
      },
      /**
       * New options in place, the cache kept (as ejabberd's reload): the cache bound, the dump file, the lists
       * read again (a file that fails is logged and the lists in force stay), the RTBLs followed anew.
       */
      async reload(next) {
        const before = options;
        options = next;
        for (const filter of filters.values()) filter.cache.resize(next.cache_size);
        if (next.spam_dump_file !== before.spam_dump_file) {
          await Promise.all([...dumps.values()].map((dump) => dump.flush()));
          openDumps();
        }
        const files = ['spam_jids_file', 'spam_domains_file', 'spam_urls_file', 'whitelist_domains_file'] as const;
        if (files.some((name) => next[name] !== before[name])) {
          try {
            const read = await readFor([...filters.keys()]);
            for (const [host, lists] of read) filters.get(host)!.setLists(lists);
          } catch (err) {
            ctx.logger.error({ err: (err as Error).message }, 'mod_antispam: lists not reloaded, those in force stay: %s', (err as Error).message);
          }
        }
        if (JSON.stringify(parseRtblServices(next.rtbl_services)) !== JSON.stringify(parseRtblServices(before.rtbl_services))) {
          await stopRtbl(alone());
          const kept = new Set(parseRtblServices(next.rtbl_services).map(serviceKey));
          for (const filter of filters.values()) for (const service of filter.rtblServices()) if (!kept.has(service)) filter.dropRtbl(service);
          followRtbl();
        }
      },
      async stop() {
        await stopRtbl(alone());
        await Promise.all([...dumps.values()].map((dump) => dump.flush()));
      },
    };
  },
});
