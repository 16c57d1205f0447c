#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/saltmarsh/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["saltmarsh/extra-charges-guide"] = (
    "Saltmarsh Campers extra charges guide",
    "Saltmarsh Campers - Extras and additional charges - 2026/27 season",
    """
# Extras and additional charges 2026/27
For pick-ups from 1 May 2026. All amounts are in New Zealand dollars
(NZD) and include GST.

1. EXTRAS YOU CAN BOOK
Item                                   Price (NZD)
Wi-Fi hotspot, unlimited data          12 per day, max 120 per hire
Snow chains                            60 per hire
Child seat or booster                  40 per hire
Extra camp chair                       5 per hire
Portable fan (summer)                  15 per hire
Ferry booking service                  25 per booking
Early pick-up from 10:00 am            50

Extras are subject to availability and can be added in My Booking up
to 24 hours before pick-up, or at the counter.

2. RETURN CONDITION CHARGES
Item                                   Charge (NZD)
Diesel tank not full                   3.50 per litre to refill
Toilet cassette not emptied            150
Grey water tank not emptied            75
Extra cleaning (inside)                200
Smoking or vaping in the camper        450
LPG bottle returned empty              40*
* Only charged on the Tui 4 and Kea 6, which carry a 9 kg LPG bottle.

We photograph the fuel gauge, the cassette and the grey tank when you
return the camper, and send the photos with any charge.
<<PAGE>>
3. FEES DURING THE HIRE
Item                                   Charge (NZD)
Late return                            50 per hour or part hour
Late return after 3:00 pm              one extra day at the daily rate
Unauthorised return to another depot   500 plus the one-way fee
Roadside call-out (driver caused)      150
Lost or damaged key                    350
Infringement or toll admin fee         45 per notice
Young driver fee (aged 21 to 24)       15 per day

4. DAMAGE
Damage is charged at the cost of repair up to the excess for your cover
option (see Insurance and bond). For damage that isn't covered, such as
damage on prohibited roads, we charge the full cost of repair plus loss
of hire of up to 5 days at the daily rate while the camper is off the
road. A claims handling fee of NZD 95 applies to each damage claim, in-
cluding claims under Zero Excess Cover.

5. HOW WE CHARGE
Charges are taken from the bond card within 14 days of the end of the
hire. If a charge is more than the bond, we charge the difference to
the same card. Questions about a charge: email bookings@saltmarsh.example
with your booking reference.
""",
)

DOCS["brightpath/instructor-payouts-guide"] = (
    "Brightpath instructor payouts guide",
    "Brightpath Learning - Instructor payouts guide - effective January 2026",
    """
# Instructor payouts guide
How and when Brightpath pays instructors. Effective January 1, 2026.
All amounts are in US dollars (USD).

1. PAYOUT SCHEDULE
Earnings for a calendar month are paid on the 7th day of the second
month after it. For example, March earnings are paid on May 7. If the
7th is a weekend or a US federal holiday, we pay on the next business
day. The delay covers the 30-day refund window on direct sales.

2. MINIMUM PAYOUT
The minimum payout is USD 50. If your balance for a month is lower, it
is carried forward and added to the next month. Balances under USD 50
are paid out anyway every December.

3. PAYOUT METHODS AND FEES
Method                  Countries           Fee per payout
ACH direct deposit      United States       Free
PayPal                  All supported       2% (max USD 20)
Payoneer                All supported       USD 3
Wire transfer           Outside the US      USD 25*
* Wire transfers are only available for payouts of USD 500 or more.

You can change your payout method in Instructor dashboard > Payouts.
Changes made after the 25th of a month apply from the following pay-
out.
<<PAGE>>
4. TAX FORMS
Instructor                     Form        Withholding if no valid form
US person                      W-9         24% backup withholding
Non-US individual              W-8BEN      30%
Non-US company                 W-8BEN-E    30%

Non-US instructors may get a lower withholding rate under a tax treaty
when they claim it on the W-8BEN. We send US instructors a Form
1099-K or 1099-MISC by January 31 each year.

5. PAYOUT HOLDS
We may hold a payout if your identity or payout details can't be
verified, if your payout details changed recently, or if we see unusual
activity on your courses, such as a high number of refunds.

6. STATEMENTS
A monthly statement is available in the dashboard from the 3rd of each
month. It shows subscription pool minutes, direct sales by source,
refunds, fees and the amount to be paid.

Questions: instructors@brightpath.example
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "saltmarsh make_pdfs.py")


if __name__ == "__main__":
    main()
