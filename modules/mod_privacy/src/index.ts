/** mod_privacy: Privacy lists (XEP-0016), enforced on delivery. (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_privacy',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Privacy lists (XEP-0016), enforced on delivery',
  start() {
    return {};
  },
});
