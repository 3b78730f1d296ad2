/**
 * mod_admin_extra: the administration commands most operators' scripts call, for accounts, rosters,
 * vCards, sessions and presence, stanzas, private storage, last activity, offline messages, statistics and
 * shared roster groups. Each area lives in its own folder; this file only puts them together.
 */
import { defineModule, type HandlersFor } from '@service/plugin-api';
import { accountCommands, accountHandlers } from './accounts/index.js';
import { ADMIN_EXTRA_USES, type AdminContext } from './context.js';
import { rosterCommands, rosterHandlers } from './roster/index.js';
import { serverCommands, serverHandlers } from './server/index.js';
import { sessionCommands, sessionHandlers } from './sessions/index.js';
import { sharedRosterCommands, sharedRosterHandlers } from './shared-roster/index.js';
import { vcardCommands, vcardHandlers } from './vcard/index.js';

const commands = [...accountCommands, ...rosterCommands, ...sessionCommands, ...vcardCommands, ...sharedRosterCommands, ...serverCommands] as const;

export default defineModule({
  name: 'mod_admin_extra',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Administration commands: accounts, rosters, vCards, sessions, stanzas, statistics, shared roster groups',
  consumes: ADMIN_EXTRA_USES.map((ref) => ({ ref, optional: true })),
  commands,
  start(ctx) {
    const cleanups: Array<() => void> = [];
    // The module context, plus onStop; Object.create keeps its live getters (hosts).
    const admin: AdminContext = Object.assign(Object.create(ctx) as AdminContext, { onStop: (cleanup: () => void) => cleanups.push(cleanup) });
    const handlers = {
      ...accountHandlers(admin),
      ...rosterHandlers(admin),
      ...sessionHandlers(admin),
      ...vcardHandlers(admin),
      ...sharedRosterHandlers(admin),
      ...serverHandlers(admin),
    } as HandlersFor<typeof commands>;
    return {
      handlers,
      stop() {
        for (const cleanup of cleanups.reverse()) cleanup();
      },
    };
  },
});
