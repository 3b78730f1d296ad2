/**
 * mod_shared_roster: shared roster groups. Members of a group appear in the rosters of the members of the
 * groups that display it, as XMPP clients see them. Managed with mod_admin_extra's srg_* commands.
 */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_shared_roster',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Shared roster groups',
  depends: ['mod_roster'],
  start() {
    return {};
  },
});
