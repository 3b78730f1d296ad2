/** Argument declarations several command areas share, with the spec's names and descriptions. */
export const user = { name: 'user', type: 'string', desc: 'User name', example: 'user1' } as const;
export const host = { name: 'host', type: 'string', desc: 'Server name', example: 'myserver.com' } as const;
