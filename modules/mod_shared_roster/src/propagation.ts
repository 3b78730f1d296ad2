/**
 * Rosters follow the groups: around every change, what each online account sees is taken before and
 * after, and mod_roster pushes the difference to its clients (and, for an administrator's change, lets
 * presence start or stop flowing as after a subscription). Accounts with no session need nothing: their
 * roster is computed when asked for, and its version changes with it (see mod_roster's shared.ts).
 */
import { Jid, type Logger, type XmppApi } from '@service/plugin-api';
import type { RosterApi, SharedContact, SharedContactChange } from '@service/mod_roster/api';
import type { Assumption, SharedView } from './view.js';

export interface PropagationOptions {
  /** Tell mod_roster's subscription listeners, so that presence follows (mod_presence). */
  readonly presence: boolean;
}

export class Propagation {
  constructor(
    private readonly roster: RosterApi,
    private readonly xmpp: XmppApi,
    private readonly view: SharedView,
    private readonly logger: Logger,
  ) {}

  /** Runs `change` (which may change anything), then brings every online account's roster up to date. */
  async around<T>(change: () => Promise<T>, options: PropagationOptions): Promise<T> {
    const owners = await this.#onlineAccounts();
    const before = new Map<string, Map<string, SharedContact>>();
    for (const owner of owners) before.set(owner.bare, await this.view.contactsOf(owner));
    const result = await change();
    for (const owner of owners) {
      const was = before.get(owner.bare)!;
      const is = await this.view.contactsOf(owner);
      const changes: SharedContactChange[] = [];
      for (const contact of new Set([...was.keys(), ...is.keys()])) {
        if (!same(was.get(contact), is.get(contact))) changes.push({ contact, before: was.get(contact) });
      }
      await this.#tell(owner, changes, options);
    }
    return result;
  }

  /**
   * Runs `change`, which changes how one account is shared and nothing else (it was created or removed, it
   * came online or went offline), then brings the online accounts' rosters up to date for that account.
   * `assume` says how to count the account before the change, when the accounts table has already moved.
   */
  async aroundContact(contact: string, change: () => Promise<void>, options: PropagationOptions & { assume?: Assumption }): Promise<void> {
    const owners = (await this.#onlineAccounts()).filter((o) => o.bare !== contact);
    const before = new Map<string, SharedContact | undefined>();
    for (const owner of owners) before.set(owner.bare, await this.view.contactAssuming(owner, contact, options.assume));
    await change();
    for (const owner of owners) {
      const was = before.get(owner.bare);
      if (!same(was, await this.view.contactOf(owner, contact))) await this.#tell(owner, [{ contact, before: was }], options);
    }
  }

  /** The accounts with a session, taken once per change: the rosters compared before and after are theirs. */
  async #onlineAccounts(): Promise<Jid[]> {
    return (await this.xmpp.sessions.accounts()).map((bare) => Jid.tryParse(bare)).filter((jid): jid is Jid => jid !== undefined);
  }

  /** A push that fails is logged: the groups have changed, and the next roster get shows it. */
  async #tell(owner: Jid, changes: readonly SharedContactChange[], options: PropagationOptions): Promise<void> {
    if (!changes.length) return;
    try {
      await this.roster.sharedContactsChanged(owner, changes, { presence: options.presence });
    } catch (err) {
      this.logger.error({ err, owner: owner.bare }, 'shared roster changes could not be pushed');
    }
  }
}

function same(a: SharedContact | undefined, b: SharedContact | undefined): boolean {
  if (!a || !b) return a === b;
  return a.nick === b.nick && a.groups.length === b.groups.length && a.groups.every((g, i) => g === b.groups[i]);
}
