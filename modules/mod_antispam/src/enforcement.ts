/**
 * Where mod_antispam refuses spam: a layer of the router's `deliver` chain. It looks at messages (all but
 * groupchat and error) and subscription requests arriving for a local account, from any sender (local
 * accounts, other virtual hosts, and later other servers alike), and refuses those its host's filter
 * condemns — unless the recipient's access_spam rule lets everything through, or the sender (or its domain,
 * a gateway) is already in the recipient's roster. A refused stanza goes no further: not delivered, not
 * archived, not stored offline; the sender gets `<policy-violation/>` as from ejabberd, the refusal is
 * logged and dumped, and the sender enters the spam filter cache.
 */
import { Jid, StanzaError, type AccessApi, type DeliverContext, type Logger, type RouterApi, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import type { HostFilter } from './filter.js';

/**
 * Outside mod_blocking (10) and mod_privacy (12): what the recipient blocked itself is refused as it
 * chose. Inside mod_roster's inbound subscriptions (40), which would store a spammer's request; mod_mam's
 * archiving (55) and mod_carboncopy (60); and the default delivery at the end of the chain, which is
 * where the offline chain (mod_offline's storage) starts. So nothing refused here is stored anywhere.
 */
export const DELIVER_PRIORITY = 20;

export interface EnforcementDeps {
  filterOf(host: string): HostFilter | undefined;
  accessRule(): string;
  access(): AccessApi;
  roster(): RosterApi | undefined;
  router: RouterApi;
  logger: Logger;
  /**
   * A refusal was made: dump it, and tell the other processes of a sender new to the cache. The sender
   * hears of the refusal only once they know, so that its next stanza is refused wherever it arrives.
   */
  refused(event: { host: string; from: Jid; to: Jid; reason: string; cachedNow: boolean; time: Date }): Promise<void>;
}

/** The stanzas the filter judges: messages but groupchat and errors, and subscription requests. */
function judged(stanza: XmlElement): boolean {
  if (stanza.name === 'message') {
    const type = stanza.attr('type');
    return type !== 'groupchat' && type !== 'error';
  }
  return stanza.name === 'presence' && stanza.attr('type') === 'subscribe';
}

function bodyOf(stanza: XmlElement): string | undefined {
  if (stanza.name !== 'message') return undefined;
  const bodies = stanza.getChildren('body').map((b) => b.text());
  return bodies.length ? bodies.join('\n') : undefined;
}

export function spamLayer(deps: EnforcementDeps) {
  return async (ctx: DeliverContext, next: () => Promise<void>): Promise<void> => {
    const { stanza, from, to } = ctx;
    if (!judged(stanza) || to.user === undefined) return next();
    // The account itself, and the server (its own domains: announcements, pubsub of its own) are never spam.
    if (from.bare === to.bare || (from.user === undefined && deps.router.isLocalHost(from.host))) return next();
    const filter = deps.filterOf(to.host);
    if (!filter) return next();
    const verdict = filter.verdict(from, bodyOf(stanza));
    if (!verdict) return next();
    const rule = deps.accessRule();
    if (rule !== 'none' && deps.access().matchRule(rule, { user: to.user, server: to.host }) === 'allow') return next();
    if (await inRoster(deps.roster(), to, from)) return next();
    const now = new Date();
    const cachedNow = filter.convict(from, verdict.cached, Math.floor(now.getTime() / 1000));
    deps.logger.info(
      { from: from.full, to: to.full, reason: verdict.reason, stanza: stanza.name },
      'spam refused: %s from %s to %s (%s)',
      stanza.name === 'message' ? 'message' : 'subscription request',
      from.full,
      to.full,
      verdict.reason,
    );
    await deps.refused({ host: to.host, from, to, reason: verdict.reason, cachedNow, time: now });
    const text = stanza.name === 'message' ? 'Your message is unsolicited' : 'Your traffic is unsolicited';
    await deps.router.bounce(stanza, new StanzaError('policy-violation', text));
  };
}

/** Whether the sender, or its domain (a gateway), is a contact in the recipient's roster (not a mere stored request). */
async function inRoster(roster: RosterApi | undefined, to: Jid, from: Jid): Promise<boolean> {
  if (!roster) return false;
  const owner = to.bare;
  if ((await roster.getItem(owner, from.bare))?.inRoster) return true;
  return from.user !== undefined && !!(await roster.getItem(owner, Jid.parse(from.host)))?.inRoster;
}
