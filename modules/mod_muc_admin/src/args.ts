/** Argument declarations the command areas share, with the spec's names, descriptions and examples. */
export const room = { name: 'room', type: 'string', desc: 'Room name', example: 'room1' } as const;
export const service = { name: 'service', type: 'string', desc: 'MUC service', example: 'conference.example.com' } as const;
export const globalService = { name: 'service', type: 'string', desc: 'MUC service, or `global` for every MUC service', example: 'conference.example.com' } as const;
export const user = { name: 'user', type: 'string', desc: 'Username', example: 'user1' } as const;
export const host = { name: 'host', type: 'string', desc: 'Server name of the user', example: 'example.com' } as const;
export const days = { name: 'days', type: 'integer', desc: 'Number of days', example: 31 } as const;
export const nodes = {
  name: 'nodes',
  type: { list: 'string', item: 'node' },
  desc: 'MUC/Sub nodes: urn:xmpp:mucsub:nodes:messages, …:presence, …:affiliations, …:subject, …:config, …:participants, …:system',
  example: ['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:affiliations'],
} as const;

/** ejabberd 24.02 renamed the room argument `name` to `room`; old scripts still send `name`. */
export const RENAME_NAME = { name: 'room' } as const;

/** The errors every command about one room has, for its longdesc. */
export const ROOM_ERRORS = 'Fails with 404 when the room does not exist, with 400 when the service is not a MUC service of this server or the room name is not a valid JID node.';
