import { describeGqtPass } from '../support/gqt-suite.js';

await describeGqtPass({ via: 'graphql', store: 'memory', servers: 'in-process' });
