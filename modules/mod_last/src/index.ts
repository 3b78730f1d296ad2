/** mod_last: Last activity (XEP-0012). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_last',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Last activity (XEP-0012)',
  start() {
    return {};
  },
});
