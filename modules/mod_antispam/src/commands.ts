/**
 * mod_antispam's eight commands, declared as data with ejabberd 25.07's names, arguments and results (RS:
 * a text; ST: 0 for success; the lists as ejabberd returns them), so that scripts written for ejabberd call
 * them unchanged. Every one takes the virtual host whose filter it acts on; `global` acts on every host.
 */
import { defineCommand } from '@service/plugin-api';

const hostArg = { name: 'host', type: 'string', desc: "Virtual host, or 'global' for every host", example: 'localhost' } as const;
const domainArg = { name: 'domain', type: 'string', desc: 'Domain to block', example: 'spam.example.net' } as const;
const jidArg = { name: 'jid', type: 'string', desc: 'JID (its bare form is cached)', example: 'spammer@spam.example.net' } as const;
const HOST_FAILS = "Fails with 400 when `host` is neither a host served here nor 'global'.";
const ACROSS = 'Every worker and cluster node applies it.';

export const antispamCommands = [
  defineCommand({
    name: 'add_blocked_domain',
    tags: ['spam'],
    desc: 'Add domain to list of blocked domains',
    longdesc: `Messages and subscription requests from any JID of \`domain\` are refused on \`host\` (unless the domain is whitelisted or the sender is in the recipient's roster), until remove_blocked_domain. Returns what was done. ${ACROSS} ${HOST_FAILS} Fails with 400 when \`domain\` is not a domain.`,
    note: 'added 25.07',
    args: [hostArg, domainArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'localhost', domain: 'spam.example.net' }, result: 'spam.example.net added to blocked domains' }],
  }),
  defineCommand({
    name: 'remove_blocked_domain',
    tags: ['spam'],
    desc: 'Remove domain from list of blocked domains',
    longdesc: `Unblocks \`domain\` on \`host\`, whichever list blocked it (the domains file, add_blocked_domain, a real-time block list), until the files are reloaded, it is added again or the RTBL publishes it again. ${ACROSS} ${HOST_FAILS}`,
    note: 'added 25.07',
    args: [hostArg, domainArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'localhost', domain: 'spam.example.net' }, result: 'spam.example.net removed from blocked domains' }],
  }),
  defineCommand({
    name: 'get_blocked_domains',
    tags: ['spam'],
    desc: 'Get list of domains being blocked',
    longdesc: `The domains blocked on \`host\` (the domains file, add_blocked_domain and the real-time block lists; whitelisted ones left out), sorted. An RTBL that publishes hashes lists them as published. ${HOST_FAILS}`,
    note: 'added 25.07',
    args: [hostArg],
    result: { name: 'blocked_domains', type: { list: 'string', item: 'jid' } },
    examples: [{ args: { host: 'localhost' }, result: ['spam.example.net'] }],
  }),
  defineCommand({
    name: 'add_to_spam_filter_cache',
    tags: ['spam'],
    desc: 'Add JID to spam filter cache',
    longdesc: `Puts the bare JID into \`host\`'s spam filter cache, as if it had just sent spam: its messages and subscription requests are refused at once. ${ACROSS} ${HOST_FAILS} Fails with 400 when \`jid\` is not a JID.`,
    note: 'added 25.07',
    args: [hostArg, jidArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'localhost', jid: 'spammer@spam.example.net' }, result: 'spammer@spam.example.net added to cache' }],
  }),
  defineCommand({
    name: 'drop_from_spam_filter_cache',
    tags: ['spam'],
    desc: 'Drop JID from spam filter cache',
    longdesc: `Takes the bare JID out of \`host\`'s spam filter cache. ${ACROSS} ${HOST_FAILS} Fails with 400 when \`jid\` is not a JID.`,
    note: 'added 25.07',
    args: [hostArg, jidArg],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'localhost', jid: 'spammer@spam.example.net' }, result: 'spammer@spam.example.net removed from cache' }],
  }),
  defineCommand({
    name: 'expire_spam_filter_cache',
    tags: ['spam'],
    desc: 'Remove old/unused spam JIDs from cache',
    longdesc: `Forgets the senders of \`host\`'s spam filter cache not seen for \`seconds\`; returns how many. ${ACROSS} ${HOST_FAILS} Fails with 400 for a negative \`seconds\`.`,
    note: 'added 25.07',
    args: [hostArg, { name: 'seconds', type: 'integer', desc: 'Age in seconds', example: 3600 }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { host: 'localhost', seconds: 3600 }, result: 'Expired 2 cache entries' }],
  }),
  defineCommand({
    name: 'get_spam_filter_cache',
    tags: ['spam'],
    desc: 'Show spam filter cache contents',
    longdesc: `The senders in \`host\`'s spam filter cache with when each was last seen (Unix seconds), sorted by JID. ${HOST_FAILS}`,
    note: 'added 25.07',
    args: [hostArg],
    result: {
      name: 'spammers',
      type: {
        list: {
          object: [
            { name: 'jid', type: 'string', desc: 'The sender (bare JID)' },
            { name: 'timestamp', type: 'integer', desc: 'When it was last seen, Unix seconds' },
          ],
        },
        item: 'spammer',
      },
    },
    examples: [{ args: { host: 'localhost' }, result: [{ jid: 'spammer@spam.example.net', timestamp: 1764230400 }] }],
  }),
  defineCommand({
    name: 'reload_spam_filter_files',
    tags: ['spam'],
    desc: 'Reload spam JID/URL files',
    longdesc: `Reads \`host\`'s list files again (spam JIDs, domains, URLs, whitelisted domains). A file that cannot be read, or a line that is not what the file lists, fails the command with 422 naming the file and line ("file:line: what is wrong"), and the lists in force stay as they were. ${ACROSS} ${HOST_FAILS}`,
    note: 'added 25.07',
    args: [hostArg],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { host: 'localhost' }, result: 0 }],
  }),
] as const;
