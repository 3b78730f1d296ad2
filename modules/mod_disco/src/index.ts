/** mod_disco: Service discovery (XEP-0030). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_disco',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Service discovery (XEP-0030)',
  start() {
    return {};
  },
});
