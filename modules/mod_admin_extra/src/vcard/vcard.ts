/**
 * vCard fields (mod_vcard, XEP-0054): get_vcard, set_vcard, get_vcard2, set_vcard2, get_vcard2_multi,
 * set_vcard2_multi, set_nickname. What these write is the vCard clients fetch over XMPP, and they read
 * what clients stored; the rest of the vCard is kept.
 */
import { CommandError, KeyedLock, badArgument, defineCommand, type AccountKey, type HandlersFor } from '@service/plugin-api';
import { vcardService } from '@service/mod_vcard/api';
import { host, user } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { existingAccount } from '../lookup.js';
import { PARTS, SINGLE_FIELDS, partField, singleField } from './vcard-names.js';
import { checkXmlText } from './xml-text.js';

const SINGLE_NAMES = `FN (full name), NICKNAME, BDAY (birthday), TITLE (work position), ROLE (work role), and the other single fields of XEP-0054: ${SINGLE_FIELDS.filter((n) => !['FN', 'NICKNAME', 'BDAY', 'TITLE', 'ROLE'].includes(n)).join(', ')}`;
const PART_NAMES = Object.entries(PARTS)
  .map(([name, parts]) => `${name} (${parts.join(', ')})`)
  .join('; ');

// XEP-0054's DTD: ORG (ORGNAME, ORGUNIT*), CATEGORIES (KEYWORD+), LABEL (…, LINE+). mod_vcard's fields.ts keeps them in one entry.
const INSIDE =
  'ORG ORGUNIT, CATEGORIES KEYWORD and LABEL LINE repeat inside one entry rather than as entries (one ORG holds its ORGNAME and all its units): they are read from and written into the first such entry.';
const ABSENT = 'A field the vCard does not have, or an account without a vCard, reads as empty: it is not an error.';
const FAILS_READ = 'Fails with 404 when the account does not exist, with 400 when the host is not served here or the name is not one of these.';
const KEEPS = 'The rest of the vCard is kept; clients fetching it over XMPP (vcard-temp) see the change at once.';
const FAILS_WRITE =
  'Fails with 404 when the account does not exist, with 400 when the host is not served here, the name is not one of these, a value holds a character XML cannot carry, or the vCard would exceed mod_vcard\'s `max_size`; nothing is changed then.';

const name = { name: 'name', type: 'string', desc: 'Field name', example: 'NICKNAME' } as const;
const partName = { name: 'name', type: 'string', desc: 'Field name', example: 'N' } as const;
const subname = { name: 'subname', type: 'string', desc: 'Subfield name', example: 'FAMILY' } as const;

export const vcardFieldCommands = [
  defineCommand({
    name: 'get_vcard',
    tags: ['vcard'],
    desc: 'Get content from a vCard field',
    longdesc:
      `Field names (case does not matter): ${SINGLE_NAMES}. Structured fields (N, ADR, TEL, EMAIL, ORG…) are read with get_vcard2. ` +
      `When the field occurs several times, the first one. ${ABSENT} ${FAILS_READ}`,
    args: [user, host, name],
    result: { name: 'content', type: 'string', desc: 'Field content' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', name: 'NICKNAME' }, result: 'User 1' }],
  }),
  defineCommand({
    name: 'get_vcard2',
    tags: ['vcard'],
    desc: 'Get content from a vCard subfield',
    longdesc:
      `Name and subname pairs (case does not matter): ${PART_NAMES}. For TEL and EMAIL, a type subname (HOME, WORK, CELL…) reads the NUMBER or USERID of the entry carrying that type. ` +
      `When the vCard has several such entries, the first one (get_vcard2_multi gives them all). ${INSIDE} ${ABSENT} ${FAILS_READ}`,
    args: [user, host, partName, subname],
    result: { name: 'content', type: 'string', desc: 'Field content' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', name: 'N', subname: 'FAMILY' }, result: 'Schubert' }],
  }),
  defineCommand({
    name: 'get_vcard2_multi',
    tags: ['vcard'],
    desc: 'Get multiple contents from a vCard field',
    longdesc: `Every value of a subfield, in document order: all the home phone numbers (TEL HOME), all the e-mail addresses (EMAIL USERID), all the units of the organization (ORG ORGUNIT). Name and subname as for get_vcard2. ${INSIDE} An empty list when there is none. ${FAILS_READ}`,
    args: [user, host, { ...partName, example: 'TEL' }, { ...subname, example: 'HOME' }],
    result: { name: 'contents', type: { list: 'string', item: 'value' }, desc: 'The values, in document order' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', name: 'TEL', subname: 'HOME' }, result: ['+1 555 0100', '+1 555 0101'] }],
  }),
  defineCommand({
    name: 'set_vcard',
    tags: ['vcard'],
    desc: 'Set content in a vCard field',
    longdesc:
      `Field names as for get_vcard: ${SINGLE_NAMES}. Creates the vCard when the account has none. An empty content removes the field. ${KEEPS} ${FAILS_WRITE}`,
    args: [user, host, { ...name, example: 'URL' }, { name: 'content', type: 'string', desc: 'Value', example: 'www.example.com' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', name: 'URL', content: 'www.example.com' }, result: 0 }],
  }),
  defineCommand({
    name: 'set_vcard2',
    tags: ['vcard'],
    desc: 'Set content in a vCard subfield',
    longdesc:
      `Name and subname pairs as for get_vcard2: ${PART_NAMES}. For TEL and EMAIL, a type subname (HOME, WORK, CELL…) writes an entry carrying that type with the value in its NUMBER or USERID, as XEP-0054 clients expect. ` +
      `When there are several such entries, the value replaces them all; for ORG ORGUNIT, CATEGORIES KEYWORD and LABEL LINE, it replaces those of the first entry, which keeps its other children (as set_vcard2_multi with one value). An empty content removes the subfield. ${KEEPS} ${FAILS_WRITE}`,
    args: [user, host, { ...partName, example: 'TEL' }, { ...subname, example: 'NUMBER' }, { name: 'content', type: 'string', desc: 'Value', example: '123456' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', name: 'TEL', subname: 'NUMBER', content: '123456' }, result: 0 }],
  }),
  defineCommand({
    name: 'set_vcard2_multi',
    tags: ['vcard'],
    desc: 'Set multiple contents in a vCard subfield',
    longdesc:
      `Makes the subfield hold exactly these values, in order: one entry each (several home phone numbers, several e-mail addresses), or, for ORG ORGUNIT, CATEGORIES KEYWORD and LABEL LINE, all inside the first entry, replacing its own and keeping its other children (an ORG keeps its ORGNAME; a new ORG gets an empty one, which XEP-0054 requires). Name and subname as for get_vcard2. ` +
      `Empty strings are left out; an empty list removes the subfield. ${KEEPS} ${FAILS_WRITE}`,
    args: [user, host, { ...partName, example: 'TEL' }, { ...subname, example: 'HOME' }, { name: 'contents', type: { list: 'string', item: 'value' }, desc: 'Contents', example: ['+1 555 0100', '+1 555 0101'] }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', name: 'TEL', subname: 'HOME', contents: ['+1 555 0100', '+1 555 0101'] }, result: 0 }],
  }),
  defineCommand({
    name: 'set_nickname',
    tags: ['vcard'],
    desc: "Set nickname in a user's vCard",
    longdesc: `Sets the NICKNAME field of the vCard, like set_vcard with the name NICKNAME; an empty nickname removes it. ${KEEPS} ${FAILS_WRITE.replace(', the name is not one of these', '')}`,
    args: [user, host, { name: 'nickname', type: 'string', desc: 'Nickname', example: 'User 1' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', nickname: 'User 1' }, result: 0 }],
  }),
] as const;

export function vcardFieldHandlers(ctx: AdminContext): HandlersFor<typeof vcardFieldCommands> {
  const vcards = (command: string) => need(ctx, vcardService, command);
  // mod_vcard's setField reads, changes and writes the whole vCard: a provisioning script setting FN,
  // NICKNAME and EMAIL in parallel would otherwise lose all but one of them.
  const locks = new KeyedLock();

  const read = async (command: string, userName: string, hostName: string, field: string, part?: string): Promise<string[]> => {
    const api = vcards(command);
    const account = await existingAccount(ctx, userName, hostName);
    return api.getField(account.user, account.host, field, part);
  };

  /** Writes the field; `argument` names the value(s) in errors. Empty values are left out. */
  const write = async (command: string, userName: string, hostName: string, field: string, part: string | undefined, argument: string, values: readonly string[]) => {
    const api = vcards(command);
    const kept = values.map((value) => checkXmlText(argument, value)).filter((value) => value !== '');
    const account: AccountKey = await existingAccount(ctx, userName, hostName);
    await locks.run(`${account.user}@${account.host}`, async () => {
      try {
        await api.setField(account.user, account.host, field, part, kept);
      } catch (err) {
        // mod_vcard names its own argument (`vcard`); here the value the caller gave is at fault.
        if (err instanceof CommandError && err.kind === 'bad_argument') throw badArgument(argument, `the vCard of ${account.user}@${account.host} cannot take this ${argument}: ${err.message}`);
        throw err;
      }
    });
  };

  return {
    get_vcard: async (args) => (await read('get_vcard', args.user, args.host, singleField(args.name, 'get_vcard')))[0] ?? '',
    get_vcard2: async (args) => {
      const field = partField(args.name, args.subname, 'get_vcard2');
      return (await read('get_vcard2', args.user, args.host, field.name, field.subname))[0] ?? '';
    },
    get_vcard2_multi: async (args) => {
      const field = partField(args.name, args.subname, 'get_vcard2_multi');
      return read('get_vcard2_multi', args.user, args.host, field.name, field.subname);
    },
    set_vcard: async (args) => {
      await write('set_vcard', args.user, args.host, singleField(args.name, 'set_vcard'), undefined, 'content', [args.content]);
    },
    set_vcard2: async (args) => {
      const field = partField(args.name, args.subname, 'set_vcard2');
      await write('set_vcard2', args.user, args.host, field.name, field.subname, 'content', [args.content]);
    },
    set_vcard2_multi: async (args) => {
      const field = partField(args.name, args.subname, 'set_vcard2_multi');
      await write('set_vcard2_multi', args.user, args.host, field.name, field.subname, 'contents', args.contents);
    },
    set_nickname: async (args) => {
      await write('set_nickname', args.user, args.host, 'NICKNAME', undefined, 'nickname', [args.nickname]);
    },
  };
}
