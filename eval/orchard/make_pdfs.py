#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/orchard/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["orchard/resident-fee-schedule"] = (
    "Resident Fee Schedule",
    "Orchard Lane Living - Resident Fee Schedule - effective July 1, 2026",
    """
# Resident Fee Schedule
Orchard Lane Living communities in Illinois and Indiana.
Effective July 1, 2026. Amounts are in US dollars.

This schedule lists the fees and charges that may apply during your
residency, as allowed by your lease. Rent, pet fees, parking and amenity
fees are described on their own help center pages. Where state or local
law limits a fee, the lower amount applies.

1. APPLYING AND MOVING IN
Item                                    Amount
Application fee                         $50 per adult applicant
Administrative fee                      $250 per home, one time
Holding deposit                         $300, applied to your deposit
Security deposit                        $500 or one month's rent*

* Depending on the result of your screening. The holding deposit is
  refunded in full if your application is declined.

2. KEYS, FOBS AND LOCKOUTS
Item                                    Amount
Lockout, during office hours            $25
Lockout, after hours                    $75
Replacement key fob                     $75 each
Replacement mailbox key                 $25
Lock change at your request             $95

3. LEASE CHANGES
Item                                    Amount
Transfer to another home, same site     $500
Adding or removing a leaseholder        $150
Month-to-month premium                  $150 a month over lease rent
<<PAGE>>
4. PAYMENTS
Item                                    Amount
Returned payment fee                    $35
Late fees                               See Paying rent
Payment processor convenience fees      See Paying rent

5. MOVE-OUT CHARGES
These are our standard charges for common move-out items. Damage not
listed is charged at the actual cost of labor and materials. Normal wear
and tear is never charged.

Item                                    Amount
Cleaning, studio or 1 bedroom           $200
Cleaning, 2 bedrooms or more            $275
Carpet cleaning, whole home             $125
Painting, per room (beyond normal use)  $175
Trash or furniture left behind          $150 per item
Unreturned key fob                      $75 each
Unreturned parking permit               $15
Missing or disabled smoke detector      $100

6. OTHER CHARGES
Item                                    Amount
Resident-caused repair, labor           $65 per hour, 1-hour minimum
Missed maintenance appointment          $40
Pet waste fine, first match             $100
Smoking inside a home                   $250 per incident, plus clean-
                                        ing and repair costs

Questions about a charge on your ledger? Message your leasing office in
the Resident Portal within 30 days of the charge.
""",
)

DOCS["fleetway/charges-guide"] = (
    "Fleetway charges guide",
    "Fleetway Car Club - Charges guide - fees and charges from 1 October 2026",
    """
# Fleetway charges guide
Fees and charges that may apply to your bookings and account.
From 1 October 2026. All amounts include VAT where it applies.

Time, mileage and membership prices are in Membership plans and prices.
This guide covers what we charge when a booking doesn't go to plan. We
only charge a fee when we have evidence, such as photos, telematics data
or a notice from an authority, and we always email you the reason.

1. TIME AND BOOKINGS
Charge                                       Amount
Late return, up to 15 minutes                Time only, no fee
Late return, more than 15 minutes            GBP 25, plus the time
Late return that delays the next member      GBP 50, plus the time
Car not returned to its home bay             GBP 60, plus moving costs
Car left unlocked                            GBP 50

Time used after your booking ends is charged at your plan's hourly rate,
in 15-minute steps. Late cancellation charges are explained in our Book-
ing and account FAQs.

2. CLEANING AND CONDITION
Charge                                       Amount
Cleaning fee (mud, litter, food, spills)     GBP 30
Deep clean (vomit, heavy pet hair)           GBP 150
Smoking or vaping in a car                   GBP 150
Low fuel fee (under a quarter of a tank)     GBP 15
Low charge fee (under 20% battery)           GBP 20
Flat battery callout (lights left on)        GBP 65
Wrong fuel: draining the tank                GBP 350, plus any repairs
<<PAGE>>
3. KEYS AND CARDS
Charge                                       Amount
Lost or damaged key card                     GBP 25
Lost fuel card or charging card              GBP 15

4. FINES AND ROAD CHARGES
Charge                                       Amount
Penalty charge admin fee                     GBP 25 per notice
London Congestion Charge                     At cost, no admin fee
Dart Charge penalty                          Penalty, plus GBP 25 admin

5. YOUR ACCOUNT
Charge                                       Amount
Failed payment                               GBP 10
Paper copy of an invoice                     GBP 2.50 each
Account reactivation after suspension        Free

If a payment fails, we try your card again after 3 days. Bookings are
blocked while your balance is unpaid, and balances unpaid after 30 days
are passed to our debt recovery partner.

6. DISPUTING A CHARGE
If you think a charge is wrong, reply to the email that told you about
it, or use Help > Disputes in the app, within 28 days. Our team replies
within 10 working days and refunds any charge made in error to your
payment card.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "orchard make_pdfs.py")


if __name__ == "__main__":
    main()
