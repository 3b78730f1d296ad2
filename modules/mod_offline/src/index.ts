/** mod_offline: Offline messages (XEP-0160): stored while the account is offline, delivered at its next initial presence. (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_offline',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Offline messages (XEP-0160): stored while the account is offline, delivered at its next initial presence',
  start() {
    return {};
  },
});
