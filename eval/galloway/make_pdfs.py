#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/galloway/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["galloway/fee-schedule"] = (
    "Galloway Express fee schedule",
    "Galloway Express GmbH - Fee schedule - valid from 1 February 2026 - EUR and CZK",
    """
# Galloway Express Fee Schedule
Fees for tickets, changes, luggage and services.
Valid for bookings made from 1 February 2026. All amounts include VAT.

1. HOW TO READ THIS SCHEDULE
Amounts are shown in euros (EUR) and, where a service is sold in
Czechia, in Czech crowns (CZK). Fees in CZK apply to bookings paid in
CZK and to payments made on domestic Czech routes. Fares themselves
are not listed here; see Fares and fare classes in our help centre.

2. BOOKING AND TICKET FEES
Item                                      EUR          CZK
Booking fee, website or phone booking     EUR 1.99     CZK 49
Booking fee, app or ticket desk           free         free
Change fee, Standard fare (per change)    EUR 5.00     CZK 125
Change fee, Flex fare                     free         free
Name change (per passenger)               EUR 4.00     CZK 100
Paper ticket printed at a ticket desk     EUR 2.00     CZK 50
Replacement ticket by email               free         free

A fare difference is charged on top of the change fee when the new
trip costs more. Travel vouchers can't be used to pay any fee in this
schedule.
<<PAGE>>
3. LUGGAGE, BIKES AND SEATS
Item                                 Online      To the driver
Extra hold bag (up to 20 kg)         EUR 4       EUR 9 / CZK 230
Overweight bag (20 to 30 kg)         EUR 6       not possible
Oversized item or instrument         EUR 12      EUR 18 / CZK 450
Bike, international routes           EUR 9.99    not possible
Bike, domestic Czech routes          CZK 199     not possible
Standard seat reservation            EUR 2.50    not possible
Extra legroom seat                   EUR 5.90    not possible

4. CZECH DOMESTIC ROUTES: FARES FROM
Route                      Saver       Standard     Flex
Prague - Brno              CZK 189     CZK 279      CZK 399
Prague - Karlovy Vary      CZK 159     CZK 229      CZK 349
Prague - Ostrava           CZK 289     CZK 419      CZK 559
Brno - Olomouc*            CZK 99      CZK 149      CZK 219
* Brno - Olomouc runs on Fridays and Sundays only.
Passengers aged 65 and over pay 50% of these fares on domestic Czech
routes.

5. OTHER CHARGES
Cleaning after smoking on board           EUR 150
Late return of a lent child seat          EUR 25 per day
Group booking service (10 or more)        free
Copy of an invoice older than 12 months   EUR 5.00

Fees paid to a driver can be paid by card only. For questions about a
fee, contact Customer Service; the numbers are on our contact page.
Fees charged by mistake are refunded to the original payment meth-
od within 10 working days of your claim.
""",
)

DOCS["dishdash/merchant-fee-schedule"] = (
    "DishDash Merchant Fee Schedule 2026",
    "DishDash Pte. Ltd. - Merchant Fee Schedule - effective 1 January 2026 - amounts in SGD",
    """
# DishDash Merchant Fee Schedule
For restaurants, hawker stalls, cafes and shops in Singapore.
Effective 1 January 2026. Amounts in Singapore dollars (SGD). Fees
charged by DishDash are subject to 9% GST.

1. COMMISSION ON COMPLETED ORDERS
Commission is charged on the order value (item prices including GST,
before DishDash-funded vouchers).

Plan                   Delivery by DishDash   Own delivery   Pick-up
Standard               28%                    15%            6%
Hawker (NEA centres)   20%                    12%            5%
Partner Plus*          32%                    18%            6%
* Partner Plus adds a featured spot in search and free professional
  menu photos twice a year. Minimum term 6 months.

2. EQUIPMENT AND ONBOARDING
Item                                   Fee
Sign-up and onboarding                 free
Order tablet (lent by DishDash)        SGD 15.00 a month
Tablet not returned within 14 days     SGD 250.00
Printer for order slips                SGD 8.00 a month
Branded delivery bags (pack of 50)     SGD 45.00
Professional menu photos               SGD 180.00 per session
<<PAGE>>
3. MARKETING (OPTIONAL)
Item                                   Fee
Sponsored listing                      SGD 0.60 per click, set a
                                       daily budget of SGD 10 or more
Merchant-funded discount               the discount you choose
Co-funded voucher campaign             DishDash pays 50% of the
                                       voucher value, up to SGD 3 per
                                       order

4. PAYOUTS AND ADJUSTMENTS
Payouts are made every Tuesday for orders completed in the previous
week (Monday to Sunday). Minimum payout: SGD 20.00; smaller amounts
roll over. A payout statement is sent by email each Tuesday.

Adjustment                              Who pays
Missing or wrong item refunded          Merchant, item price
Poor food quality (with photo)          Merchant, item price
Spilled or damaged by rider             DishDash
Order not delivered                     DishDash
Late-order voucher (SGD 3)              DishDash

Merchants can dispute an adjustment within 7 days of the payout
statement in the Merchant app, under Payouts > Dispute. DishDash re-
plies within 5 working days.

5. NOTICE
DishDash gives at least 30 days' written notice of any change to
commission rates or fees in this schedule.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "galloway make_pdfs.py")


if __name__ == "__main__":
    main()
