// SPDX-License-Identifier: GPL-2.0-or-later
// Drive the pages of `ljsnap report -f html` in Debian's chromium (headless,
// through playwright-core) for tests/output/html.sh.
//
//   node html_check.js PLAYWRIGHT_DIR CASES.json
//
// CASES.json: [{ page, label, empty?, root?, search?, matched?, total?,
//               zoom?, header?: [text...], screenshot? }]
// where matched/total come from the folded output of the same profile.
// Each page is loaded from file://; every request must be a file:// URL and
// the console must show no error.  Prints "ok: ..." lines; exits 1 on the
// first failure.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require(path.join(process.argv[2], 'node_modules', 'playwright-core'));
const cases = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));

let failed = 0;
function check(label, cond, what) {
	if (cond) {
		console.log(`ok: ${label}: ${what}`);
	} else {
		console.log(`FAIL: ${label}: ${what}`);
		failed++;
	}
}

// The colour of the canvas pixel at client coordinates (x, y).
async function pixel(page, x, y) {
	return page.evaluate(([x, y]) => {
		const c = document.getElementById('fg'), r = c.getBoundingClientRect();
		const k = c.width / r.width;
		const d = c.getContext('2d').getImageData(Math.floor((x - r.left) * k),
			Math.floor((y - r.top) * k), 1, 1).data;
		return [d[0], d[1], d[2]];
	}, [x, y]);
}

// The drawn rectangle of the first frame called name, scrolled into the
// middle of the viewport (client coordinates), or null.
async function rectOf(page, name) {
	const r = await page.evaluate((n) => window.ljsnap.rectOf(n), name);
	if (!r)
		return null;
	await page.evaluate((y) => window.scrollBy(0, y - window.innerHeight / 2), r.y + r.h / 2);
	return page.evaluate((n) => window.ljsnap.rectOf(n), name);
}

async function run(ctx, c) {
	const page = await ctx.newPage();
	const errors = [], requests = [];
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('request', (r) => requests.push(r.url()));
	await page.goto('file://' + path.resolve(c.page));
	await page.waitForFunction(() => window.ljsnap !== undefined, null, { timeout: 120000 });
	const L = c.label;
	const drawn = await page.evaluate(() => window.ljsnap.drawn());
	if (c.empty) {
		check(L, drawn === 0, `nothing drawn (${drawn} rectangles)`);
		check(L, await page.isVisible('#empty'), 'the page says there are no samples');
	} else {
		check(L, drawn > 0, `${drawn} rectangles drawn`);
		const labels = await page.evaluate(() => window.ljsnap.labels());
		check(L, labels.includes(`all (${c.total} samples)`), `"all (${c.total} samples)" drawn`);
		check(L, labels.includes(c.root), `the root frame "${c.root}" drawn`);
	}
	const head = await page.textContent('header');
	for (const h of c.header || [])
		check(L, head.includes(h), `the header says "${h}"`);
	if (c.search) {
		await page.fill('#search', c.search);
		const info = await page.textContent('#matchinfo');
		const m = /matched: (\d+) of (\d+) samples \(([\d.]+)%\)/.exec(info);
		check(L, m && +m[1] === c.matched && +m[2] === c.total,
			`search /${c.search}/: "${info}", folded: ${c.matched} of ${c.total}`);
		const want = 100 * c.matched / c.total;
		check(L, m && Math.abs(+m[3] - want) <= 0.051, `share ${m && m[3]}% = folded ${want.toFixed(3)}%`);
		const r = await rectOf(page, c.searchFrame);
		const px = r && await pixel(page, r.x + r.w / 2, r.y + 2);
		check(L, px && px[0] === 238 && px[1] === 0 && px[2] === 238,
			`"${c.searchFrame}" highlighted (pixel ${px})`);
	}
	if (c.zoom) {
		const before = await rectOf(page, c.zoom);
		check(L, before && before.w < before.W - 1, `"${c.zoom}" narrower than the graph before the zoom`);
		await page.mouse.move(before.x + before.w / 2, before.y + before.h / 2);
		const tip = await page.textContent('#tip');
		check(L, (await page.isVisible('#tip')) && tip.includes(c.zoom) && /total: \d+ samples/.test(tip),
			`tooltip: "${tip.slice(0, 120)}"`);
		await page.mouse.click(before.x + before.w / 2, before.y + before.h / 2);
		const after = await page.evaluate((n) => window.ljsnap.rectOf(n), c.zoom);
		const zi = await page.textContent('#zoominfo');
		check(L, after && Math.abs(after.w - after.W) < 0.01, `after a click "${c.zoom}" is full width`);
		check(L, zi.includes('zoomed into ' + c.zoom), `the page says "${zi}"`);
		if (c.search) {
			const info = await page.textContent('#matchinfo');
			check(L, /of the zoomed frame/.test(info), `the share in the zoomed frame: "${info}"`);
		}
		await page.click('#reset', { timeout: 5000 }).catch(() => {});
		check(L, (await page.evaluate(() => window.ljsnap.zoomed())) === null &&
			(await page.textContent('#zoominfo')) === '', 'reset zoom');
	}
	if (!c.empty) {
		const y0 = (await page.evaluate(() => window.ljsnap.rectOf('all'))).y;
		await page.check('#inverted');
		const y1 = (await page.evaluate(() => window.ljsnap.rectOf('all'))).y;
		const top = await page.evaluate(() => document.getElementById('fg').getBoundingClientRect().top);
		check(L, y1 === top && y0 > y1, `inverted: the root row moves to the top (${y0} -> ${y1})`);
		await page.uncheck('#inverted');
	}
	if (c.screenshot) {
		if (c.search)
			await page.fill('#search', c.search);
		await page.screenshot({ path: c.screenshot, fullPage: true });
		console.log(`screenshot: ${c.screenshot}`);
	}
	const foreign = requests.filter((u) => !u.startsWith('file://'));
	check(L, foreign.length === 0, `requests: ${requests.length}, none but file:// (${foreign.join(' ')})`);
	check(L, errors.length === 0, `no console error (${errors.join(' | ')})`);
	await page.close();
}

(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ljsnap-chromium-'));
	const ctx = await chromium.launchPersistentContext(dir, {
		executablePath: process.env.LJSNAP_CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: { width: 1280, height: 800 },
		args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
			'--disable-sync', '--no-first-run'],
	});
	try {
		for (const c of cases)
			await run(ctx, c);
	} finally {
		await ctx.close();
		fs.rmSync(dir, { recursive: true, force: true });
	}
	process.exit(failed ? 1 : 0);
})().catch((e) => {
	console.log('FAIL: ' + (e && e.stack || e));
	process.exit(1);
});
