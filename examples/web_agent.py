"""A browser agent that drives the example web form (`web_form.py`) through DevTools
itself, with Playwright's `connect_over_cdp` or (`--driver selenium`) selenium through
chromedriver's `debuggerAddress`: the browser's address is `MM_CDP_URL` (under `mm record`
or a heal, mm's endpoint in front of the browser), else `--cdp URL`.

It looks at the page before it acts: a "Session expiring" dialog over the form is closed
first (its "Stay signed in" button); then Name (`--name`, else `$MM_PARAM_NAME`), City
(`--city`, else `$MM_PARAM_CITY`, else Paris) and Save, with the mouse and the keyboard
as a person would.

    python examples/web_agent.py --cdp http://127.0.0.1:9222 --name Ada
    python examples/web_agent.py --driver selenium    # chromedriver on PATH

Exit codes: 0 done, 1 error.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cdp", default=os.environ.get("MM_CDP_URL"), help="DevTools address")
    p.add_argument("--name", default=os.environ.get("MM_PARAM_NAME", "Ada"))
    p.add_argument("--city", default=os.environ.get("MM_PARAM_CITY", "Paris"))
    p.add_argument("--driver", choices=("playwright", "selenium"), default="playwright")
    p.add_argument(
        "--new-tab",
        action="store_true",
        help="fill the form in a new tab of its own (a page mm does not drive)",
    )
    p.add_argument(
        "--script-submit",
        action="store_true",
        help="submit the form with script, not a click (input replay cannot repeat)",
    )
    a = p.parse_args(argv)
    if not a.cdp:
        print("web_agent: no DevTools address (MM_CDP_URL or --cdp)", file=sys.stderr)
        return 1
    if a.driver == "selenium":
        _selenium(a.cdp, a.name, a.city)
    else:
        _playwright(a.cdp, a.name, a.city, a.script_submit, a.new_tab)
    return 0


def _playwright(
    address: str, name: str, city: str, script_submit: bool = False, new_tab: bool = False
) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(address)
        page = browser.contexts[0].pages[0]
        if new_tab:
            url, page = page.url, browser.contexts[0].new_page()
            page.goto(url)
        stay = page.locator("#modal button")
        if stay.count():
            stay.click()
        for field, value in (("#name", name), ("#city", city)):
            page.locator(field).click()
            page.keyboard.type(value)
        with page.expect_navigation():
            if script_submit:
                page.wait_for_timeout(2500)  # well after the last key
                page.evaluate("document.forms[0].submit()")
            else:
                page.locator("#save").click()


def _selenium(address: str, name: str, city: str) -> None:
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    options = webdriver.ChromeOptions()
    options.debugger_address = address.removeprefix("http://")  # host:port, no scheme
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    try:
        for stay in driver.find_elements(By.CSS_SELECTOR, "#modal button"):
            stay.click()
        for field, value in (("name", name), ("city", city)):
            element = driver.find_element(By.ID, field)
            element.click()
            element.send_keys(value)
        driver.find_element(By.ID, "save").click()
        WebDriverWait(driver, 10).until(expected_conditions.title_is("Saved"))
    finally:
        driver.quit()  # attached to a browser it did not start: it stays open


if __name__ == "__main__":
    sys.exit(main())
