/** mod_blocking: Blocking command (XEP-0191), enforced on delivery. (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_blocking',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Blocking command (XEP-0191), enforced on delivery',
  start() {
    return {};
  },
});
