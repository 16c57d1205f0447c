#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/seabright/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["seabright/guest-charges-guide"] = (
    "Seabright Hotels: Guest Charges Guide 2026",
    "Seabright Hotel Group DAC - Guest Charges Guide - stays 1 Jan to 31 Dec 2026",
    """
# Guest Charges Guide 2026
Charges that may be added to your bill during a stay at any Seabright
hotel. Valid for stays from 1 January 2026 to 31 December 2026. All prices
are in euro (EUR) and include VAT. Room rates are not in this guide; see
Room types and rates in our Help Centre.

1. ROOM EXTRAS
Item                                     Charge
Early check-in from 12 noon              EUR 25
Late check-out until 2pm                 EUR 30
Room until 6pm (day use)                 50% of that night's room rate
Rollaway bed (children 4 to 12)          EUR 35 per night
Travel cot                               Free
Dog (Kinsale and Westport only)          EUR 25 per dog per night
Replacement key card                     EUR 10
Room service tray charge                 EUR 5 per order
Grab-and-go breakfast bag                EUR 8.50

2. PARKING AND EV CHARGING
Hotel               Car parking               EV charging
Galway Salthill     Free                      EUR 0.45 per kWh
Kinsale             Free                      Not available
Dublin Docklands    EUR 22 per 24 hours*      Q-Park public chargers
Westport            Free                      EUR 0.45 per kWh
* With a car park ticket validated at reception. Without validation the
  Q-Park's own tariff applies.
<<PAGE>>
3. CLEANING AND DAMAGE
Item                                     Charge
Smoking or vaping in a bedroom           EUR 250
Extra cleaning after a dog stay          up to EUR 150
Missing towel or bathrobe                EUR 40 per item
Tampering with a smoke detector          EUR 500
Damage to furniture or fittings          cost of repair

Smoking is not allowed in any bedroom or on any balcony. The smoking charge
covers deep cleaning and the cost of keeping the room out of use for up to
two nights. Charges for cleaning and damage are only made after the duty
manager has reviewed them, and we send you photographs on request.

4. OTHER SERVICES
Service                                  Charge
Same-day laundry (handed in by 9am)      priced per item, see room folder
Ironing board and iron                   Free on request
Lost property posted within Ireland      EUR 12
Lost property posted to UK and Europe    EUR 25
Printing at reception                    EUR 0.20 per page

5. PAYING AND QUERYING A CHARGE
All charges are added to your room folio and paid at check-out. If a charge
is added after you leave, we charge the card held on the booking and email
you a receipt. If you think a charge is wrong, email our accounts team at
accounts@seabrighthotels.example within 60 days of your stay, quoting your
folio number. We aim to reply within 10 working days and to refund any
wrong charge to the card you paid with. Charges in other curren-
cies are never made; we always charge in euro.
""",
)

DOCS["shieldline/sample-policy-declarations"] = (
    "Sample homeowners policy declarations page",
    "Shieldline Mutual Insurance Company - Homeowners Policy Declarations - SAMPLE - not a contract",
    """
# Homeowners Policy Declarations (SAMPLE)
This sample shows the layout of the declarations page that comes with every
Shieldline homeowners policy. All names and numbers on it are examples.

Policy number:       SL-HO-4471-2026-0193
Named insured:       Jordan and Casey Sample
Insured location:    118 Maple Ridge Court, Cary, NC 27519
Policy period:       03/15/2026 to 03/15/2027, 12:01 a.m. standard time
Policy tier:         Preferred (form SL-HO3 06-25)
Mortgagee:           First Coastal Bank, ISAOA/ATIMA, loan no. 0048821937

COVERAGES                                  LIMIT OF LIABILITY
A  Dwelling                                USD 420,000
B  Other structures                        USD 42,000
C  Personal property (replacement cost)    USD 294,000
D  Loss of use                             USD 126,000
E  Personal liability, each occurrence     USD 300,000
F  Medical payments, each person           USD 5,000

DEDUCTIBLES
All other perils                           USD 1,000
Windstorm or hail                          2% of Coverage A (USD 8,400)
Hurricane                                  Not applicable in this county
<<PAGE>>
ENDORSEMENTS
Form        Description                           Limit         Premium
SL 04 61    Scheduled personal property           USD 12,500    USD 187.50
            (jewelry: 1 ring, 1 watch)
SL 04 95    Water backup, increased limit         USD 10,000    USD 65.00
SL 04 20    Extended replacement cost (25%)       Included      Included
SL 04 30    Equipment breakdown                   Included      Included

PREMIUM
Base premium                               USD 1,655.00
Endorsements                               USD 252.50
Discounts: claims-free 5+ years (15%),     - USD 331.00
monitored alarm (5%)
Policy fee (first term only)               USD 25.00
Total premium for the policy period        USD 1,601.50

Payment plan: Monthly, 12 installments. Installment fee USD 5.00 each
(USD 2.00 with AutoPay from a bank account).

HOW TO READ THIS PAGE
Coverage B, C and D are set as a percentage of Coverage A for your tier.
Your wind or hail deductible is shown as a percentage and, in brackets, in
dollars. The total premium includes the policy fee only in the first term.
If anything on this page is wrong, call Customer Service within 30 days of
the start of the policy period so that we can correct your declara-
tions and your premium.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "seabright make_pdfs.py")


if __name__ == "__main__":
    main()
