/** mod_roster: Rosters (RFC 6121): roster get/set/remove, pushes, presence subscriptions, roster versioning. (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_roster',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Rosters (RFC 6121): roster get/set/remove, pushes, presence subscriptions, roster versioning',
  start() {
    return {};
  },
});
