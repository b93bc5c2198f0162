import { describeGqtPass } from '../support/gqt-suite.js';

await describeGqtPass({ via: 'rest', store: 'memory', servers: 'in-process' });
