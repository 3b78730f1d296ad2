/**
 * The archiving layers. On user_send, the sender's copy goes to the sender's archive; on deliver, the
 * recipient's copy goes to the recipient's archive and the delivered message gets the XEP-0359
 * <stanza-id by='recipient'/> naming it (after any such element a client put there with the same `by` is
 * removed: the id must be this server's). The deliver layer runs before delivery chooses between sessions
 * and offline storage, so a message stored offline is archived and stamped too. Each insert is awaited
 * before the message goes on: once a client sees a message (or its sender's stream acknowledges it), its
 * archive row is written.
 */
import { Jid, accountKey, x, type AccountsApi, type DeliverContext, type Logger, type SendContext, type SessionDirectory, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { NS_SID } from './ns.js';
import { archivableBody, wantsArchived } from './policy.js';
import type { DefaultMode, PrefsStore } from './prefs-store.js';
import type { ArchiveStore, Direction } from './store.js';

export interface ArchivingDeps {
  readonly store: ArchiveStore;
  readonly prefs: PrefsStore;
  readonly accounts: AccountsApi;
  readonly sessions: SessionDirectory;
  readonly logger: Logger;
  readonly defaultMode: () => DefaultMode;
  readonly roster: () => RosterApi | undefined;
}

/** The message without stanza-ids claiming to be `by` (the archive owner's bare JID). */
export function withoutSpoofedIds(message: XmlElement, by: string): XmlElement {
  if (!message.getChildren('stanza-id', NS_SID).some((c) => c.attr('by') === by)) return message;
  return message.clone().removeChildren((c) => c.is('stanza-id', NS_SID) && c.attr('by') === by);
}

export class Archiver {
  constructor(private readonly deps: ArchivingDeps) {}

  /** user_send: the sender's archive. */
  async onSend(ctx: SendContext, next: () => Promise<void>): Promise<void> {
    const to = ctx.to;
    if (to?.user !== undefined) {
      const owner = ctx.session.account.toBare();
      const stanza = withoutSpoofedIds(ctx.stanza, owner.bare);
      await this.#archive(owner, to, 'out', stanza);
    }
    await next();
  }

  /** deliver: the recipient's archive, and the stanza-id on what is delivered. */
  async onDeliver(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    const owner = ctx.to.toBare();
    if (ctx.stanza.name === 'message') {
      // Always strip: a client's stanza-id naming the recipient's archive must never reach it.
      const stanza = withoutSpoofedIds(ctx.stanza, owner.bare);
      ctx.stanza = stanza;
      // A message to one's own account was archived once already, when it was sent; a message for an
      // account that does not exist is bounced further on, and has no archive to go to.
      if (ctx.from.bare !== owner.bare && archivableBody(stanza) !== undefined && (await this.#exists(owner))) {
        const id = await this.#archive(owner, ctx.from, 'in', stanza);
        if (id !== undefined) ctx.stanza = stanza.clone().append(x('stanza-id', { xmlns: NS_SID, by: owner.bare, id }));
      }
    }
    await next();
  }

  /** Whether the account exists: one with a session does, without asking the database (most messages). */
  async #exists(owner: Jid): Promise<boolean> {
    return (await this.deps.sessions.byAccount(owner.bare)).length > 0 || this.deps.accounts.exists(owner.user!, owner.host);
  }

  /** Archives `stanza` in `owner`'s archive when the policy says so; the stanza id, or undefined. */
  async #archive(owner: Jid, peer: Jid, direction: Direction, stanza: XmlElement): Promise<string | undefined> {
    const body = archivableBody(stanza);
    if (body === undefined) return undefined;
    const account = accountKey(owner.user!, owner.host);
    try {
      const prefs = await this.deps.prefs.get(account);
      if (!(await wantsArchived(owner, peer, prefs, this.deps.defaultMode(), this.deps.roster()))) return undefined;
      return await this.deps.store.add(account, { peer: peer.bare, peerFull: peer.full, direction, stanza, body });
    } catch (err) {
      // A storage failure must not lose the message itself: it goes on, unarchived, and the log says so.
      this.deps.logger.error({ err, owner: owner.bare, direction }, 'a message could not be archived');
      return undefined;
    }
  }
}
