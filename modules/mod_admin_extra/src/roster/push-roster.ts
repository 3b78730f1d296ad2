/**
 * push_roster and push_roster_all: rosters from a file of (username, servername, group, nick) entries
 * (format in push-file.ts). Every entry becomes a contact with subscription both, in the entry's group
 * (added to the groups the item already has) and with the entry's nick (an empty nick keeps the name).
 *
 *   push_roster file user host   the entries become contacts of user@host; a contact that is an account
 *                                here gets user@host with subscription both too (see batch.ts)
 *   push_roster_all file         every listed account gets every other listed account
 *
 * The whole file is read and checked before anything is written: a missing file, a malformed one, an
 * invalid JID, an unknown account or a roster that would overflow changes nothing.
 */
import { CommandError, defineCommand, type CallContext, type HandlersFor, type Jid } from '@service/plugin-api';
import { rosterService } from '@service/mod_roster/api';
import { host as hostArg, user as userArg } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { contactJid, localAccount } from './accounts.js';
import { RosterBatch, rosterFailure, type ItemWrite } from './batch.js';
import { readPushFile, type PushEntry } from './push-file.js';

const FILE_FORMAT =
  'The file is ejabberd\'s: Erlang terms, one list of `{User, Server, Group, Nick}` tuples ended by a full stop, e.g. `[{<<"user1">>,<<"localhost">>,<<"Workers">>,<<"User 1">>}].` ' +
  '(strings `"user1"` work too). A file whose name ends in `.json` is read as JSON: `[{"user": "user1", "host": "localhost", "group": "Workers", "nick": "User 1"}]` or `[["user1", "localhost", "Workers", "User 1"]]`. ' +
  'A relative path is relative to data_dir. An empty group adds no group; an empty nick leaves the name as it is.';

const file = { name: 'file', type: 'string', desc: 'File path (absolute, or relative to data_dir)', example: '/home/service/roster.txt' } as const;

export const pushRosterCommands = [
  defineCommand({
    name: 'push_roster',
    tags: ['roster'],
    desc: 'Push template roster from file to a user',
    longdesc:
      'Adds every entry of the file to the roster of `user@host` with subscription both, in the entry\'s group and with its nick; the user itself is skipped if listed. ' +
      'An entry that is an account of this server gets `user@host` in its own roster with subscription both as well (an item created for it has no name and no group), so both sides agree. ' +
      'Clients that asked for their roster get a push for every item that changed. ' +
      `${FILE_FORMAT} ` +
      'Fails, changing nothing, with 404 when the account or the file does not exist, 400 when the file cannot be read or is malformed (the message gives the line), ' +
      'lists an invalid JID or the same contact twice, and 409 when a roster would exceed max_roster_size.',
    args: [file, userArg, hostArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: '/home/service/roster.txt', user: 'user1', host: 'myserver.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'push_roster_all',
    tags: ['roster'],
    desc: 'Push template roster from file to all those users',
    longdesc:
      'Every account listed in the file gets every other listed account in its roster, with subscription both, in that entry\'s group and with its nick. ' +
      'Clients that asked for their roster get a push for every item that changed. ' +
      `${FILE_FORMAT} ` +
      'Fails, changing nothing, with 404 when the file or a listed account does not exist, 400 when the file cannot be read or is malformed (the message gives the line), ' +
      'lists a host not served here or the same account twice, and 409 when a roster would exceed max_roster_size.',
    args: [file],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { file: 'rosters/workers.txt' }, result: 0 }],
  }),
] as const;

/** Where an entry came from, before a message about it. */
function at(path: string, entry: PushEntry): string {
  return `${path} line ${entry.line}`;
}

/** A command error about an entry, with the file and line in front. */
function aboutEntry(err: unknown, path: string, entry: PushEntry): unknown {
  const failure = rosterFailure(err, 'file');
  if (failure instanceof CommandError) {
    const kind = failure.kind === 'bad_argument' || failure.kind === 'not_found' ? failure.kind : 'bad_argument';
    return new CommandError(kind, `${at(path, entry)}: ${failure.message}`, kind === 'bad_argument' ? 'file' : undefined);
  }
  return failure;
}

/** Refuses an account or contact listed twice: which line would win is anybody's guess. */
function noDuplicates(path: string, entries: ReadonlyArray<{ entry: PushEntry; jid: Jid }>): void {
  const seen = new Map<string, PushEntry>();
  for (const { entry, jid } of entries) {
    const first = seen.get(jid.bare);
    if (first) throw new CommandError('bad_argument', `${path} lists ${jid.bare} twice, on lines ${first.line} and ${entry.line}`, 'file');
    seen.set(jid.bare, entry);
  }
}

/** The write that makes `contact` (from `entry`) a contact of `owner`: both, the entry's group added. */
async function entryWrite(batch: RosterBatch, owner: Jid, contact: Jid, entry: PushEntry): Promise<ItemWrite> {
  const existing = await batch.item(owner, contact);
  const groups = new Set(existing?.groups ?? []);
  if (entry.group !== '') groups.add(entry.group);
  return { owner, contact, nick: entry.nick === '' ? undefined : entry.nick, groups: [...groups], subscription: 'both' };
}

export function pushRosterHandlers(ctx: AdminContext): HandlersFor<typeof pushRosterCommands> {
  const progress = (call: CallContext) => (done: number, total: number) => call.progress(done, total, 'roster items');

  return {
    push_roster: async ({ file: path, user, host }, call) => {
      const roster = need(ctx, rosterService, 'push_roster');
      const owner = await localAccount(ctx, user, host);
      const { file: resolved, entries } = await readPushFile(path, ctx.services.config().dataDir);
      const contacts: Array<{ entry: PushEntry; jid: Jid }> = [];
      for (const entry of entries) {
        let jid: Jid;
        try {
          jid = contactJid(entry.user, entry.host);
        } catch (err) {
          throw aboutEntry(err, resolved, entry);
        }
        // As in ejabberd: the template may list the user itself, who is not its own contact.
        if (jid.bare !== owner.bare) contacts.push({ entry, jid });
      }
      noDuplicates(resolved, contacts);
      const batch = new RosterBatch(ctx, roster);
      await batch.preload(owner);
      const writes: ItemWrite[] = [];
      for (const { entry, jid } of contacts) {
        const write = await entryWrite(batch, owner, jid, entry);
        try {
          batch.add(write);
        } catch (err) {
          throw aboutEntry(err, resolved, entry);
        }
        writes.push(write);
      }
      for (const write of writes) await batch.addMirror(write);
      await batch.checkRoom();
      await batch.apply(progress(call));
      call.log.info({ file: resolved, owner: owner.bare, contacts: contacts.length }, 'push_roster: %d contacts for %s', contacts.length, owner.bare);
    },

    push_roster_all: async ({ file: path }, call) => {
      const roster = need(ctx, rosterService, 'push_roster_all');
      const { file: resolved, entries } = await readPushFile(path, ctx.services.config().dataDir);
      const accounts: Array<{ entry: PushEntry; jid: Jid }> = [];
      for (const entry of entries) {
        try {
          accounts.push({ entry, jid: await localAccount(ctx, entry.user, entry.host) });
        } catch (err) {
          throw aboutEntry(err, resolved, entry);
        }
      }
      noDuplicates(resolved, accounts);
      const batch = new RosterBatch(ctx, roster);
      for (const owner of accounts) {
        await batch.preload(owner.jid);
        for (const contact of accounts) {
          if (contact === owner) continue;
          const write = await entryWrite(batch, owner.jid, contact.jid, contact.entry);
          try {
            batch.add(write);
          } catch (err) {
            throw aboutEntry(err, resolved, contact.entry);
          }
        }
      }
      await batch.checkRoom();
      await batch.apply(progress(call));
      call.log.info({ file: resolved, accounts: accounts.length }, 'push_roster_all: %d accounts subscribed to each other', accounts.length);
    },
  };
}
