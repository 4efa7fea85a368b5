// Package e2e checks the HTML page of fgcheck replay --html in a real
// headless browser (Chromium, driven by chromedp): the violation is visible
// and not hidden by the sticky header, the timeline has the expected lanes
// and contexts, the shadow-stack pictures are drawn with curr_ret_stack
// marked, the page loads nothing but itself and throws no script error, and
// the barrier toggle works. It saves screenshots in out/.
//
// It is its own module so that the main module, and go test ./... there, do
// not depend on chromedp. Run it with make e2e (which builds fgcheck and
// writes the page first); it skips when there is no /usr/bin/chromium.
package e2e
