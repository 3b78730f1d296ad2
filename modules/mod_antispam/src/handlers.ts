/**
 * The handlers of mod_antispam's eight commands: each names one virtual host's filter (or every one with
 * `global`), checks its arguments (400 naming the argument, nothing changed), applies the change here and
 * sends it to the other workers and nodes before answering, in ejabberd's words.
 */
import { Jid, badArgument, failed, type HandlersFor, type Logger } from '@service/plugin-api';
import type { antispamCommands } from './commands.js';
import type { HostFilter } from './filter.js';
import { ListFileError, domainOf, type SpamLists } from './lists.js';
import type { Change } from './sync.js';

export interface HandlerDeps {
  readonly filters: ReadonlyMap<string, HostFilter>;
  /** Applies a change to this process's filters. */
  apply(change: Change): Promise<void>;
  /** Tells the other processes. */
  send(change: Change): Promise<void>;
  /** Reads the list files of these hosts, all or none (throws ListFileError). */
  readFor(hosts: readonly string[]): Promise<Map<string, SpamLists>>;
  readonly logger: Logger;
}

export function antispamHandlers(deps: HandlerDeps): HandlersFor<typeof antispamCommands> {
  const { filters, apply, readFor } = deps;
  /** The filters a command's `host` names: one served host, or every one for 'global'. */
  const targets = (host: string): HostFilter[] => {
    if (host === 'global') return [...filters.values()];
    const name = Jid.tryParse(host.trim())?.host;
    const filter = name !== undefined && !host.includes('@') && !host.includes('/') ? filters.get(name) : undefined;
    if (!filter) throw badArgument('host', `'${host}' is not a virtual host served here, nor 'global'`);
    return [filter];
  };
  /** Applies here, then tells the other processes; the text of the first host answers (ejabberd's `global`). */
  const each = async (host: string, act: (filter: HostFilter) => { change: Change; text: string }): Promise<string> => {
    const texts: string[] = [];
    for (const filter of targets(host)) {
      const { change, text } = act(filter);
      await apply(change);
      await deps.send(change);
      texts.push(text);
    }
    return texts[0] ?? 'No virtual host';
  };
  const domainArg = (domain: string) => {
    const name = domainOf(domain);
    if (name === undefined) throw badArgument('domain', `'${domain}' is not a domain`);
    return name;
  };
  const jidArg = (jid: string) => {
    const parsed = Jid.tryParse(jid.trim());
    if (!parsed) throw badArgument('jid', `'${jid}' is not a valid JID`);
    return parsed.bare;
  };
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  return {
    add_blocked_domain: ({ host, domain }) => {
      const name = domainArg(domain);
      return each(host, (filter) => ({ change: { op: 'domain_add', host: filter.host, domain: name }, text: `${name} added to blocked domains` }));
    },
    remove_blocked_domain: ({ host, domain }) => {
      const name = domainArg(domain);
      return each(host, (filter) => {
        const was = filter.isBlockedDomain(name) || filter.blockedDomains().includes(name);
        return { change: { op: 'domain_remove', host: filter.host, domain: name }, text: was ? `${name} removed from blocked domains` : `${name} was not blocked` };
      });
    },
    get_blocked_domains: ({ host }) => {
      const all = new Set<string>();
      for (const filter of targets(host)) for (const domain of filter.blockedDomains()) all.add(domain);
      return [...all].sort();
    },
    add_to_spam_filter_cache: ({ host, jid }) => {
      const bare = jidArg(jid);
      return each(host, (filter) => ({ change: { op: 'cache_add', host: filter.host, jid: bare, timestamp: nowSeconds() }, text: `${bare} added to cache` }));
    },
    drop_from_spam_filter_cache: ({ host, jid }) => {
      const bare = jidArg(jid);
      return each(host, (filter) => ({
        change: { op: 'cache_drop', host: filter.host, jid: bare },
        text: filter.cache.has(bare) ? `${bare} removed from cache` : `${bare} wasn't cached`,
      }));
    },
    expire_spam_filter_cache: async ({ host, seconds }) => {
      if (seconds < 0) throw badArgument('seconds', `must be 0 or more, not ${seconds}`);
      const now = nowSeconds();
      let expired = 0;
      await each(host, (filter) => {
        expired += filter.cache.entries().filter((e) => e.timestamp < now - seconds).length;
        return { change: { op: 'cache_expire', host: filter.host, seconds, now }, text: '' };
      });
      return `Expired ${expired} cache entries`;
    },
    get_spam_filter_cache: ({ host }) => targets(host).flatMap((filter) => filter.cacheEntries()),
    reload_spam_filter_files: async ({ host }) => {
      const chosen = targets(host);
      let read: Map<string, SpamLists>;
      try {
        read = await readFor(chosen.map((f) => f.host));
      } catch (err) {
        if (err instanceof ListFileError) throw failed(`${err.message}; the lists in force are unchanged`);
        throw err;
      }
      for (const filter of chosen) {
        filter.setLists(read.get(filter.host)!);
        deps.logger.info({ host: filter.host }, 'spam filter lists of %s reloaded', filter.host);
        await deps.send({ op: 'reload', host: filter.host });
      }
      return true;
    },
  };
}
